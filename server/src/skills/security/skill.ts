/**
 * security-ai `secrets` and `scan` skills. `scan` runs checks by intelligence tier: CORE secrets +
 * container/IaC checks (Dockerfile, Kubernetes YAML), PRO adds dependency scanning (lock files
 * against a local OSV advisory file, and the npm registry's bulk advisory endpoint when
 * `input.online` asks for it and ACMF allows the `http_request` action), ULTRA adds static code analysis (review-ai's parser-based
 * dangerous-pattern rules over JS/TS) and custom rules (`.cadre/rules.yaml`); the artifact lists which
 * checks ran, which were skipped and why. `input.since` (a commit-ish) keeps only the findings whose
 * fingerprint the same scan of that commit's tree does not produce.
 */
import { existsSync } from 'node:fs';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { filterNew, readBaseline } from '../findings/baseline';
import { countBySeverity, maxSeverity, sortFindings, type Finding } from '../findings/finding';
import { toSarif } from '../findings/sarif';
import { redactSecretsIn } from '../findings/redact';
import type { RuleInfo } from '../findings/finding';
import { ConfinedFile, DEFAULT_ADVISORIES_FILE, lockfileKind, resolveAdvisoriesFile, scanDependenciesOnline } from './dependencies';
import { confinedInputFile, InputFileError } from '../workspace/files';
import { NpmAdvisoryClient, ONLINE_ACTION_KIND, onlineRequest, redactUrl, bulkAdvisoryUrl, type OnlineLookupReport } from './npm-advisories';
import { IAC_RULES, scanIac } from './iac';
import { SECRET_RULE_DEFS } from './rules';
import { coverageOf, listFiles, scanText, scanTree, type TreeScanResult } from './scanner';
import { CODE_RULES, scanCode } from './code';
import { includeVendored } from '../code-analysis/vendored';
import { CustomRulesError, DEFAULT_CUSTOM_RULES_FILE, loadCustomRules, resolveCustomRulesFile, scanCustomRules, type CustomRule } from './custom-rules';
import { checkoutCommitTree, SinceError } from './since';
import { proposeReads } from '../read-proposal';

/** Limitations `scan` always states (whatever the tier). */
export const SCAN_LIMITATION = 'IaC checks cover Dockerfiles, Kubernetes YAML and Terraform (.tf literal settings: variables, modules and plans are not evaluated)';
/** Stated when static code analysis runs (ULTRA). */
export const CODE_LIMITATION = 'static code analysis covers JavaScript and TypeScript only (intra-procedural taint from request inputs and security patterns; calls into other functions are not followed)';
export const ULTRA_SKIPPED = 'requires the ULTRA intelligence tier';
/** Stated when the dependency check ran without the npm registry lookup (followed by why). */
export const OFFLINE_ADVISORIES_LIMITATION = 'dependency advisories came from the local OSV file only, the npm registry was not asked';

export type ScanCheckId = 'secrets' | 'iac' | 'dependencies' | 'code' | 'custom-rules';

/** One check of `scan`: whether it ran for this tier, and why not. */
export interface ScanCheck {
  id: ScanCheckId;
  /** Minimum tier that runs it. */
  tier: 'core' | 'pro' | 'ultra';
  /** `error`: the check could not run because of the user's input (an invalid custom rules file). */
  status: 'ran' | 'skipped' | 'unavailable' | 'error';
  reason?: string;
  findings: number;
  /** Files the check looked at (IaC files, lock files). */
  files?: string[];
  /** `dependencies` only: the npm registry bulk advisory lookup (ran, or why not). */
  online?: OnlineLookupReport;
}

export interface SecurityReportData {
  scope: 'secrets' | 'scan';
  limitations: string[];
  /** `scan` only: the checks that ran or were skipped for the tier. */
  checks?: ScanCheck[];
  findings: Finding[];
  summary: {
    total: number;
    bySeverity: Record<string, number>;
    byRule: Record<string, number>;
    filesConsidered: number;
    filesScanned: number;
    coverage: number;
    skipped: Record<string, number>;
    suppressed: number;
    /** Findings already in the baseline (not reported), when a baseline was given. */
    baselined: number;
    /** With `input.since`: the commit compared against and how many findings already existed there (not reported). */
    since?: { ref: string; commit: string; preexisting: number };
  };
  suppressed: Array<{ ruleId: string; file: string; line: number; reason: string }>;
  sarif: Record<string, unknown>;
}

function renderText(action: string, data: SecurityReportData): string {
  const s = data.summary;
  const lines = [
    `# security-ai ${action}`,
    '',
    `${s.total} finding(s) in ${s.filesScanned} of ${s.filesConsidered} file(s) (coverage ${(s.coverage * 100).toFixed(1)}%).`,
    `By severity: ${Object.entries(s.bySeverity).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}.`,
  ];
  if (s.suppressed) lines.push(`${s.suppressed} finding(s) suppressed inline with a reason.`);
  if (s.baselined) lines.push(`${s.baselined} finding(s) already in the baseline are not reported.`);
  if (s.since) lines.push(`Only findings new since ${s.since.ref} (${s.since.commit.slice(0, 12)}): ${s.since.preexisting} finding(s) that already existed there are not reported.`);
  for (const c of data.checks ?? []) {
    lines.push(`Check ${c.id} (${c.tier.toUpperCase()}+): ${c.status}${c.status === 'ran' ? `, ${c.findings} finding(s)` : ''}${c.reason ? ` (${c.reason})` : ''}.`);
    const o = c.online;
    if (o) {
      const counts = o.status === 'skipped' ? '' : `, ${o.answered ?? 0}/${o.requests ?? 0} request(s) answered, ${o.advisories ?? 0} advisory(ies), ${o.findings ?? 0} finding(s)${o.duplicates ? `, ${o.duplicates} already reported by the OSV file` : ''}`;
      lines.push(`Online npm advisories${o.endpoint ? ` (${o.endpoint})` : ''}: ${o.status}${counts}${o.reason ? ` (${o.reason})` : ''}${o.errors?.length ? `; errors: ${o.errors.join('; ')}` : ''}.`);
    }
  }
  for (const l of data.limitations) lines.push(`Note: ${l}.`);
  if (data.findings.length) lines.push('', '| severity | rule | location | snippet (redacted) |', '|---|---|---|---|');
  for (const f of data.findings.slice(0, 200)) {
    // Snippets are redacted by the scanner; backticks and pipes are neutralised for the table.
    const snip = (f.snippet ?? '').replace(/[|`]/g, ' ').slice(0, 120);
    lines.push(`| ${f.severity} | ${f.ruleId} | ${f.file}:${f.range.startLine}:${f.range.startColumn} | ${snip} |`);
  }
  if (data.findings.length > 200) lines.push(`... and ${data.findings.length - 200} more (see data.findings / SARIF).`);
  return `${lines.join('\n')}\n`;
}

function baselineOf(ctx: SkillContext, workspace: string): string[] | undefined {
  const b = ctx.request.input['baseline'];
  if (Array.isArray(b) && b.every((x) => typeof x === 'string')) return b as string[];
  const file = typeof b === 'string' ? b : '.cadre/secrets-baseline.json';
  // Inside the workspace only (InputFileError names the path, never its content).
  const abs = confinedInputFile(workspace, file, 'input.baseline');
  if (!abs || !existsSync(abs)) return undefined;
  return readBaseline(abs).fingerprints;
}

/**
 * `text` redacted by shape, then judged as the secrets-clean gate judges an artifact (the scanner on
 * the text itself): what it still finds is cut too, and a text that keeps a secret-shaped value after
 * that is withheld. A report must never fail its own gate with what it quotes.
 */
function sweep(text: string): string {
  let out = redactSecretsIn(text);
  for (let pass = 0; pass < 2; pass++) {
    const left = scanText(out, 'artifact.txt', { suppressions: false });
    if (left.length === 0) return out;
    // A one-line text comes back as its own snippet with every secret on it cut.
    out = !out.includes('\n') && left[0]!.snippet ? left[0]!.snippet : out;
  }
  return scanText(out, 'artifact.txt', { suppressions: false }).length === 0 ? out : '(withheld: it holds a secret-shaped value)';
}

function redactFinding(f: Finding): Finding {
  const message = sweep(f.message);
  const snippet = f.snippet === undefined ? undefined : sweep(f.snippet);
  return message === f.message && snippet === f.snippet ? f : { ...f, message, ...(snippet !== undefined ? { snippet } : {}) };
}

/** Builds the report from a tree scan (exported for tests and other callers). */
export function buildSecurityReport(result: TreeScanResult, baseline: readonly string[] | undefined, workspaceUri?: string, limitations: string[] = [],
  extra: { scope?: 'secrets' | 'scan'; checks?: ScanCheck[]; rules?: readonly RuleInfo[]; since?: { ref: string; commit: string; fingerprints: readonly string[] } } = {}): SecurityReportData {
  const afterBaseline = baseline ? filterNew(result.findings, baseline) : result.findings;
  // Every analyzer's message and snippet (IaC lines, custom rules, code) swept for secrets once more:
  // a RUN line with a URL password or a custom rule matching a token line must not carry it out.
  const findings = (extra.since ? filterNew(afterBaseline, extra.since.fingerprints) : afterBaseline).map(redactFinding);
  const byRule: Record<string, number> = {};
  for (const f of findings) byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  const skipped: Record<string, number> = {};
  for (const s of result.skipped) skipped[s.reason] = (skipped[s.reason] ?? 0) + 1;
  return {
    scope: extra.scope ?? 'secrets',
    limitations,
    ...(extra.checks ? { checks: extra.checks } : {}),
    findings,
    summary: {
      total: findings.length,
      bySeverity: countBySeverity(findings),
      byRule,
      filesConsidered: result.filesConsidered,
      filesScanned: result.filesScanned,
      coverage: coverageOf(result),
      skipped,
      suppressed: result.suppressed.length,
      baselined: result.findings.length - afterBaseline.length,
      ...(extra.since ? { since: { ref: extra.since.ref, commit: extra.since.commit, preexisting: afterBaseline.length - findings.length } } : {}),
    },
    suppressed: result.suppressed.map((s) => ({ ruleId: s.finding.ruleId, file: s.finding.file, line: s.finding.range.startLine, reason: s.reason })),
    sarif: toSarif(findings, [...SECRET_RULE_DEFS, ...(extra.rules ?? [])], { toolName: 'cadre-security-ai', ...(workspaceUri ? { workspaceUri } : {}) }),
  };
}

const TIER_RANK: Record<string, number> = { core: 0, pro: 1, ultra: 2 };

/** Tier rank of a request; an unknown tier counts as core. */
function tierRank(tier: unknown): number {
  return TIER_RANK[String(tier).toLowerCase()] ?? 0;
}

interface ExtraChecks {
  findings: Finding[];
  suppressed: TreeScanResult['suppressed'];
  checks: ScanCheck[];
  rules: RuleInfo[];
  limitations: string[];
}

/** Custom rules for a scan: the rules, null when there is no rules file, or why they cannot be used. */
export function customRulesFor(ws: string, input: unknown): CustomRule[] | null | Error {
  let file: string | undefined;
  try { file = resolveCustomRulesFile(ws, input); } catch (e) { return e as Error; }
  if (!file) return typeof input === 'string' && input ? new Error(`custom rules file not found: ${input}`) : null;
  try {
    return loadCustomRules(file, ws);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

export interface TierCheckOptions {
  /** `input.rules`: the custom rules file (default .cadre/rules.yaml). */
  rulesInput?: unknown;
  /** Already loaded custom rules (overrides rulesInput; used to scan an older tree with today's rules). */
  customRules?: CustomRule[] | null | Error;
  signal?: AbortSignal;
  /** The npm registry lookup: a client when requested and allowed, else why it is skipped. Default: not requested. */
  online?: OnlineGate;
  /** Code analysis reads vendored, minified and generated files too (default: skipped and listed). */
  includeVendored?: boolean;
}

/** Whether `scan` may ask the npm registry: a client, or why not (`requested`: input.online was set). */
export type OnlineGate = { client: NpmAdvisoryClient } | { requested: boolean; skipped: string };

/** The description of the proposed (and, once sent, taken) `http_request` action. */
export function onlineActionDescription(registry: string): string {
  return `POST the names and versions of the locked npm packages to ${redactUrl(bulkAdvisoryUrl(registry))} (npm bulk advisory lookup; nothing else is sent)`;
}

export const ONLINE_NOT_REQUESTED = 'input.online is not set: the npm registry is contacted only when a step asks for it';

/**
 * The online gate of a `scan` step: `input.online` set and valid, the tier PRO or higher, and ACMF
 * allowed the `http_request` action (`allowed` is `ctx.allowed`). `fetchImpl` is for tests.
 */
export function onlineGate(input: unknown, tier: unknown, allowed: (kind: string) => boolean, fetchImpl?: typeof fetch): OnlineGate {
  const req = onlineRequest(input);
  if (!req.requested) return { requested: false, skipped: ONLINE_NOT_REQUESTED };
  if ('error' in req) return { requested: true, skipped: `invalid input.online: ${req.error}` };
  if (tierRank(tier) < 1) return { requested: true, skipped: 'dependency scanning (and with it the npm registry lookup) requires the PRO intelligence tier' };
  if (!allowed(ONLINE_ACTION_KIND)) return { requested: true, skipped: `ACMF did not allow the ${ONLINE_ACTION_KIND} action (POST to ${redactUrl(bulkAdvisoryUrl(req.registry))})` };
  return { client: new NpmAdvisoryClient(req.registry, req.timeoutMs, fetchImpl) };
}

/** The tier-gated checks of `scan` beyond secrets. */
export async function runTierChecks(ws: string, files: readonly string[], tier: unknown, advisoriesInput: unknown, opts: TierCheckOptions = {}): Promise<ExtraChecks> {
  const rank = tierRank(tier);
  const out: ExtraChecks = { findings: [], suppressed: [], checks: [], rules: [...IAC_RULES], limitations: [SCAN_LIMITATION] };
  const iac = scanIac(ws, files);
  out.findings.push(...iac.findings);
  out.suppressed.push(...iac.suppressed);
  const iacFiles = [...iac.dockerfiles, ...iac.manifests, ...iac.terraform];
  out.checks.push({ id: 'iac', tier: 'core', status: 'ran', findings: iac.findings.length, files: iacFiles,
    ...(iacFiles.length ? {} : { reason: 'no Dockerfile, Kubernetes manifest or Terraform file in the workspace' }) });
  if (iac.errors.length) out.limitations.push(`${iac.errors.length} YAML document(s) could not be parsed and were not checked`);

  const gate: OnlineGate = opts.online ?? { requested: false, skipped: ONLINE_NOT_REQUESTED };
  const skippedOnline = (reason: string): OnlineLookupReport => ({ status: 'skipped', reason });
  if (rank < 1) {
    out.checks.push({ id: 'dependencies', tier: 'pro', status: 'skipped', reason: 'dependency scanning requires the PRO intelligence tier', findings: 0,
      ...('client' in gate || gate.requested ? { online: skippedOnline('dependency scanning (and with it the npm registry lookup) requires the PRO intelligence tier') } : {}) });
  } else {
    let file: string | undefined;
    let refused: string | undefined;
    try { file = resolveAdvisoriesFile(ws, advisoriesInput); } catch (e) {
      if (!(e instanceof InputFileError)) throw e;
      refused = e.message;
    }
    const hasFile = !!file && existsSync(file);
    const client = 'client' in gate ? gate.client : undefined;
    const noFile = `no advisory file: give input.advisories (an OSV JSON file) or add ${DEFAULT_ADVISORIES_FILE}`;
    if (refused && !client) {
      out.checks.push({ id: 'dependencies', tier: 'pro', status: 'unavailable', findings: 0, reason: refused });
    } else if (!hasFile && !client) {
      out.checks.push({ id: 'dependencies', tier: 'pro', status: 'unavailable', findings: 0,
        reason: `${noFile}, or set input.online to ask the npm registry`, ...('client' in gate ? {} : { online: skippedOnline(gate.skipped) }) });
    } else {
      const d = await scanDependenciesOnline(ws, files, hasFile ? file : undefined, client, opts.signal);
      const online = d.online ?? ('client' in gate ? undefined : skippedOnline(gate.skipped));
      const onlineUsable = !!d.online && d.online.status !== 'failed' && d.online.status !== 'skipped';
      if (d.advisoriesError !== undefined && !onlineUsable) {
        out.checks.push({ id: 'dependencies', tier: 'pro', status: 'unavailable', findings: 0, reason: `advisory file unreadable: ${d.advisoriesError}`,
          ...(online ? { online } : {}) });
      } else if (!hasFile && !onlineUsable) {
        out.checks.push({ id: 'dependencies', tier: 'pro', status: 'unavailable', findings: 0, files: d.lockfiles.map((l) => l.file),
          reason: `${noFile}, and the npm registry lookup did not answer`, ...(online ? { online } : {}) });
      } else {
        out.findings.push(...d.findings);
        out.rules.push(...d.rules);
        const failed = d.lockfiles.filter((l) => l.error);
        out.checks.push({ id: 'dependencies', tier: 'pro', status: 'ran', findings: d.findings.length, files: d.lockfiles.map((l) => l.file),
          ...(d.lockfiles.length ? {} : { reason: 'no lock file (package-lock.json, yarn.lock, pnpm-lock.yaml) in the workspace' }),
          ...(online ? { online } : {}) });
        if (failed.length) out.limitations.push(`${failed.length} lock file(s) could not be parsed: ${failed.map((l) => l.file).join(', ')}`);
        if (d.advisoriesError !== undefined) out.limitations.push(`the local advisory file could not be read (${d.advisoriesError}); only the npm registry's advisories were used`);
        if (!hasFile) out.limitations.push(`${noFile}; only the npm registry's advisories were used`);
      }
      if (d.online && (d.online.status === 'failed' || d.online.status === 'partial')) {
        out.limitations.push(`the npm registry lookup ${d.online.status === 'failed' ? 'failed' : 'was incomplete'}: ${(d.online.errors ?? []).join('; ')}`);
      }
      if (d.online?.unreadableRanges) out.limitations.push(`${d.online.unreadableRanges} npm advisory range(s) could not be read and were not matched`);
    }
    if (!('client' in gate) && hasFile) out.limitations.push(`${OFFLINE_ADVISORIES_LIMITATION}: ${gate.skipped}`);
  }

  if (rank < 2) {
    out.checks.push({ id: 'code', tier: 'ultra', status: 'skipped', findings: 0, reason: `static code analysis (dangerous code patterns) ${ULTRA_SKIPPED}` });
    out.checks.push({ id: 'custom-rules', tier: 'ultra', status: 'skipped', findings: 0, reason: `custom rules ${ULTRA_SKIPPED}` });
    return out;
  }
  const code = await scanCode(ws, files, { ...(opts.signal ? { signal: opts.signal } : {}), includeVendored: opts.includeVendored ?? false });
  out.findings.push(...code.findings);
  out.suppressed.push(...code.suppressed);
  out.rules.push(...CODE_RULES);
  out.checks.push({ id: 'code', tier: 'ultra', status: 'ran', findings: code.findings.length, files: code.files,
    ...(code.files.length ? {} : { reason: 'no JavaScript or TypeScript file in the workspace' }) });
  out.limitations.push(CODE_LIMITATION);
  if (code.parseErrors.length) out.limitations.push(`${code.parseErrors.length} JS/TS file(s) have syntax errors and were analyzed on the parser's recovered tree: ${code.parseErrors.slice(0, 5).join(', ')}`);
  if (code.skipped.length) out.limitations.push(`${code.skipped.length} JS/TS file(s) over 1 MiB or unreadable were not analyzed`);
  if (code.vendored.length) out.limitations.push(`${code.vendored.length} vendored, minified or generated JS/TS file(s) were not analyzed (input.includeVendored or analysis.include_vendored analyzes them): ${code.vendored.slice(0, 5).map((v) => `${v.file} (${v.reason})`).join(', ')}`);

  const custom = opts.customRules !== undefined ? opts.customRules : customRulesFor(ws, opts.rulesInput);
  if (custom === null) {
    out.checks.push({ id: 'custom-rules', tier: 'ultra', status: 'skipped', findings: 0, reason: `no custom rules: add ${DEFAULT_CUSTOM_RULES_FILE} or give input.rules` });
  } else if (custom instanceof Error) {
    out.checks.push({ id: 'custom-rules', tier: 'ultra', status: 'error', findings: 0, reason: `invalid custom rules: ${custom.message}` });
    out.limitations.push(`custom rules did not run: ${custom instanceof CustomRulesError ? `${custom.issues.length} problem(s) in ${custom.file}` : custom.message}`);
  } else {
    const c = await scanCustomRules(ws, files, custom, opts.signal);
    out.findings.push(...c.findings);
    out.suppressed.push(...c.suppressed);
    out.rules.push(...custom.map((r) => ({ id: r.id, description: r.description, severity: r.severity, family: r.family })));
    out.checks.push({ id: 'custom-rules', tier: 'ultra', status: 'ran', findings: c.findings.length });
  }
  return out;
}

function makeSecuritySkill(action: 'secrets' | 'scan'): Skill {
  const limitations = action === 'scan' ? [SCAN_LIMITATION] : [];
  return {
    agentId: 'security-ai',
    action,
    needs: ['workspace'],
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) {
        evidence.constraints.push('no workspace to scan');
        return evidence;
      }
      const files = listFiles(ws);
      evidence.pathsRead.push(...files);
      evidence.items.push({ source: 'workspace listing', detail: `${files.length} file(s) to scan (skip dirs and .gitignore applied)`, weight: files.length ? 1 : 0 });
      if (action === 'scan') {
        evidence.constraints.push(SCAN_LIMITATION);
        const rank = tierRank(ctx.request.tier);
        if (rank < 1) evidence.constraints.push('dependency scanning skipped: requires the PRO tier');
        if (rank < 2) evidence.constraints.push('static code analysis and custom rules skipped: require the ULTRA tier');
      }
      ctx.progress(20, 0);
      return evidence;
    },
    propose(ctx, evidence) {
      const what = action === 'scan' ? 'to scan (secrets, IaC, and by tier dependencies, code patterns and custom rules)' : 'to scan for secrets';
      const acts = proposeReads(evidence, `read ${evidence.pathsRead.length} workspace file(s) ${what}`);
      // The npm registry lookup is proposed (and so rated and decided by ACMF) only when asked for, at PRO+, with a lock file to look up.
      const req = action === 'scan' ? onlineRequest(ctx.request.input['online']) : { requested: false as const };
      if (req.requested && !('error' in req) && tierRank(ctx.request.tier) >= 1 && evidence.pathsRead.some((f) => lockfileKind(f) && !/(^|\/)node_modules\//.test(f))) {
        acts.push({ kind: ONLINE_ACTION_KIND, external: true, description: onlineActionDescription(req.registry) });
      }
      return acts;
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string): Artifact => ({ kind: 'security-findings', summary: `security-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace to scan');
      if (evidence.pathsRead.length === 0) return unable('the workspace has no files to scan');
      const sinceInput = ctx.request.input['since'];
      if (sinceInput !== undefined && (typeof sinceInput !== 'string' || !sinceInput.trim())) return unable('input.since must be a commit-ish (a string)');
      let baseline: string[] | undefined;
      try { baseline = baselineOf(ctx, ws); } catch (e) {
        // An outside or unreadable baseline: the path and what is wrong, never the file's content.
        return unable(e instanceof Error ? e.message : String(e));
      }
      // Findings this tenant's people rated false positives, suppressed through ACMF (adapt-ai; handed in by the engine).
      const adapted = Array.isArray(ctx.request.input['suppressedFindings']) ? (ctx.request.input['suppressedFindings'] as unknown[]).filter((x): x is string => typeof x === 'string') : [];
      if (adapted.length > 0) baseline = [...(baseline ?? []), ...adapted];
      const adaptedNote = adapted.length > 0 ? [`${adapted.length} finding fingerprint(s) rated false positives are suppressed (adapt-ai, applied through ACMF); counted as baselined`] : [];
      const result = await scanTree(ws, { files: evidence.pathsRead, signal: ctx.signal });
      const coverage = coverageOf(result);
      if (result.filesScanned === 0) return unable('no text file of the workspace could be scanned');
      ctx.progress(80, coverage);
      let data: SecurityReportData;
      // Resolved once against today's workspace, so that a scan of an older tree uses the same advisories and rules.
      let advisories: unknown;
      if (action === 'scan') {
        try {
          const f = resolveAdvisoriesFile(ws, ctx.request.input['advisories']);
          advisories = f ? new ConfinedFile(f) : ctx.request.input['advisories'];
        } catch {
          advisories = ctx.request.input['advisories']; // refused again, and reported, by runTierChecks
        }
      }
      const customRules = action === 'scan' && tierRank(ctx.request.tier) >= 2 ? customRulesFor(ws, ctx.request.input['rules']) : null;
      // One client for both trees of a `since` run: each locked version is asked about once.
      const online = action === 'scan' ? onlineGate(ctx.request.input['online'], ctx.request.tier, (k) => ctx.allowed(k)) : undefined;
      let since: { ref: string; commit: string; fingerprints: string[] } | undefined;
      if (typeof sinceInput === 'string') {
        let old;
        try {
          old = await checkoutCommitTree(ws, sinceInput.trim(), ctx.signal);
        } catch (e) {
          if (e instanceof SinceError) return unable(e.message);
          throw e;
        }
        try {
          const oldFiles = existsSync(old.dir) ? listFiles(old.dir) : [];
          const before = await scanTree(old.dir, { files: oldFiles, signal: ctx.signal });
          const fps = before.findings.map((f) => f.fingerprint);
          if (action === 'scan') {
            const oldExtra = await runTierChecks(old.dir, oldFiles, ctx.request.tier, advisories, { customRules, signal: ctx.signal, includeVendored: includeVendored(ctx.request.input), ...(online ? { online } : {}) });
            fps.push(...oldExtra.findings.map((f) => f.fingerprint));
          }
          since = { ref: sinceInput.trim(), commit: old.commit, fingerprints: fps };
        } finally {
          old.dispose();
        }
      }
      if (action === 'scan') {
        const extra = await runTierChecks(ws, evidence.pathsRead, ctx.request.tier, advisories, { customRules, signal: ctx.signal, includeVendored: includeVendored(ctx.request.input), ...(online ? { online } : {}) });
        const secretCount = result.findings.length;
        const merged: TreeScanResult = { ...result, findings: sortFindings([...result.findings, ...extra.findings]), suppressed: [...result.suppressed, ...extra.suppressed] };
        const checks: ScanCheck[] = [{ id: 'secrets', tier: 'core', status: 'ran', findings: secretCount }, ...extra.checks];
        data = buildSecurityReport(merged, baseline, `file://${ws}`, [...extra.limitations, ...adaptedNote], { scope: 'scan', checks, rules: extra.rules, ...(since ? { since } : {}) });
      } else {
        data = buildSecurityReport(result, baseline, `file://${ws}`, [...limitations, ...adaptedNote], since ? { since } : {});
      }
      const s = data.summary;
      const sev = Object.entries(s.bySeverity).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ');
      const ran = (data.checks ?? []).filter((c) => c.status === 'ran').map((c) => c.id);
      const skipped = (data.checks ?? []).filter((c) => c.status !== 'ran').map((c) => c.id);
      return {
        kind: 'security-findings',
        summary: action === 'scan'
          ? `security-ai scan: ${s.total} finding(s)${sev ? ` (${sev})` : ''} in ${s.filesScanned}/${s.filesConsidered} files; checks run: ${ran.join(', ')}${skipped.length ? `; not run: ${skipped.join(', ')}` : ''}`
          : `security-ai ${action}: ${s.total} secret finding(s)${sev ? ` (${sev})` : ''} in ${s.filesScanned}/${s.filesConsidered} files`,
        goalRef,
        confidence: coverage,
        data,
        text: renderText(action, data),
        findingsAfter: { count: s.total, maxSeverity: Math.max(0, maxSeverity(data.findings)) },
        ...(online && 'client' in online && online.client.requestsSent > 0
          ? { actionsTaken: [{ kind: ONLINE_ACTION_KIND, external: true, description: onlineActionDescription(online.client.registry) }] } : {}),
        tokens: 0,
      };
    },
    async optimize(_ctx, artifact) {
      const data = artifact.data as SecurityReportData | null;
      if (!data) return { artifact, patterns: [] };
      // Highest severity first; one finding per fingerprint and location.
      const seen = new Set<string>();
      const rank = (f: Finding) => ['critical', 'high', 'medium', 'low', 'info'].indexOf(f.severity);
      const findings = [...data.findings].sort((a, b) => rank(a) - rank(b) || a.file.localeCompare(b.file) || a.range.startLine - b.range.startLine)
        .filter((f) => {
          const k = `${f.fingerprint}@${f.file}:${f.range.startLine}:${f.range.startColumn}`;
          return seen.has(k) ? false : (seen.add(k), true);
        });
      return { artifact: { ...artifact, data: { ...data, findings } }, patterns: [] };
    },
  };
}

export const secretsSkill: Skill = makeSecuritySkill('secrets');
export const scanSkill: Skill = makeSecuritySkill('scan');
export const securitySkills: Skill[] = [secretsSkill, scanSkill];
