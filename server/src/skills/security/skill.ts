/**
 * security-ai `secrets` and `scan` skills. `scan` runs checks by intelligence tier: CORE secrets +
 * container/IaC checks (Dockerfile, Kubernetes YAML), PRO adds dependency scanning (lock files
 * against a local OSV advisory file), ULTRA would add static code analysis and custom rules, which
 * are not available yet; the artifact lists which checks ran, which were skipped and why.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { filterNew, readBaseline } from '../findings/baseline';
import { countBySeverity, maxSeverity, sortFindings, type Finding } from '../findings/finding';
import { toSarif } from '../findings/sarif';
import type { RuleInfo } from '../findings/finding';
import { DEFAULT_ADVISORIES_FILE, resolveAdvisoriesFile, scanDependencies } from './dependencies';
import { IAC_RULES, scanIac } from './iac';
import { SECRET_RULE_DEFS } from './rules';
import { coverageOf, listFiles, scanTree, type TreeScanResult } from './scanner';
import { proposeReads } from '../read-proposal';

/** Limitations `scan` always states (whatever the tier). */
export const SCAN_LIMITATION = 'static code analysis (dangerous code patterns) and custom rules are not available yet (ULTRA); IaC checks cover Dockerfiles and Kubernetes YAML only (no Terraform yet)';
export const ONLINE_ADVISORIES_LIMITATION = 'dependency advisories are read from a local OSV file only; fetching advisories online is not available';

export type ScanCheckId = 'secrets' | 'iac' | 'dependencies' | 'code';

/** One check of `scan`: whether it ran for this tier, and why not. */
export interface ScanCheck {
  id: ScanCheckId;
  /** Minimum tier that runs it. */
  tier: 'core' | 'pro' | 'ultra';
  status: 'ran' | 'skipped' | 'unavailable';
  reason?: string;
  findings: number;
  /** Files the check looked at (IaC files, lock files). */
  files?: string[];
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
  for (const c of data.checks ?? []) {
    lines.push(`Check ${c.id} (${c.tier.toUpperCase()}+): ${c.status}${c.status === 'ran' ? `, ${c.findings} finding(s)` : ''}${c.reason ? ` (${c.reason})` : ''}.`);
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
  const abs = path.resolve(workspace, file);
  if (!existsSync(abs)) return undefined;
  return readBaseline(abs).fingerprints;
}

/** Builds the report from a tree scan (exported for tests and other callers). */
export function buildSecurityReport(result: TreeScanResult, baseline: readonly string[] | undefined, workspaceUri?: string, limitations: string[] = [],
  extra: { scope?: 'secrets' | 'scan'; checks?: ScanCheck[]; rules?: readonly RuleInfo[] } = {}): SecurityReportData {
  const findings = baseline ? filterNew(result.findings, baseline) : result.findings;
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
      baselined: result.findings.length - findings.length,
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

/** The tier-gated checks of `scan` beyond secrets. */
export function runTierChecks(ws: string, files: readonly string[], tier: unknown, advisoriesInput: unknown): ExtraChecks {
  const rank = tierRank(tier);
  const out: ExtraChecks = { findings: [], suppressed: [], checks: [], rules: [...IAC_RULES], limitations: [SCAN_LIMITATION] };
  const iac = scanIac(ws, files);
  out.findings.push(...iac.findings);
  out.suppressed.push(...iac.suppressed);
  const iacFiles = [...iac.dockerfiles, ...iac.manifests];
  out.checks.push({ id: 'iac', tier: 'core', status: 'ran', findings: iac.findings.length, files: iacFiles,
    ...(iacFiles.length ? {} : { reason: 'no Dockerfile or Kubernetes manifest in the workspace' }) });
  if (iac.errors.length) out.limitations.push(`${iac.errors.length} YAML document(s) could not be parsed and were not checked`);

  if (rank < 1) {
    out.checks.push({ id: 'dependencies', tier: 'pro', status: 'skipped', reason: 'dependency scanning requires the PRO intelligence tier', findings: 0 });
  } else {
    const file = resolveAdvisoriesFile(ws, advisoriesInput);
    if (!file || !existsSync(file)) {
      out.checks.push({ id: 'dependencies', tier: 'pro', status: 'unavailable', findings: 0,
        reason: `no advisory file: give input.advisories (an OSV JSON file) or add ${DEFAULT_ADVISORIES_FILE}` });
    } else {
      try {
        const d = scanDependencies(ws, files, file);
        out.findings.push(...d.findings);
        out.rules.push(...d.rules);
        const failed = d.lockfiles.filter((l) => l.error);
        out.checks.push({ id: 'dependencies', tier: 'pro', status: 'ran', findings: d.findings.length, files: d.lockfiles.map((l) => l.file),
          ...(d.lockfiles.length ? {} : { reason: 'no lock file (package-lock.json, yarn.lock, pnpm-lock.yaml) in the workspace' }) });
        if (failed.length) out.limitations.push(`${failed.length} lock file(s) could not be parsed: ${failed.map((l) => l.file).join(', ')}`);
      } catch (e) {
        out.checks.push({ id: 'dependencies', tier: 'pro', status: 'unavailable', findings: 0, reason: `advisory file unreadable: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
    out.limitations.push(ONLINE_ADVISORIES_LIMITATION);
  }
  out.checks.push({ id: 'code', tier: 'ultra', status: rank < 2 ? 'skipped' : 'unavailable', findings: 0,
    reason: rank < 2 ? 'static code analysis and custom rules require the ULTRA intelligence tier (and are not available yet)' : 'static code analysis and custom rules are not available yet' });
  return out;
}

function makeSecuritySkill(action: 'secrets' | 'scan'): Skill {
  const limitations = action === 'scan' ? [SCAN_LIMITATION] : [];
  return {
    agentId: 'security-ai',
    action,
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
        if (tierRank(ctx.request.tier) < 1) evidence.constraints.push('dependency scanning skipped: requires the PRO tier');
      }
      ctx.progress(20, 0);
      return evidence;
    },
    propose(_ctx, evidence) {
      const what = action === 'scan' ? 'to scan (secrets, IaC, and by tier dependencies)' : 'to scan for secrets';
      return proposeReads(evidence, `read ${evidence.pathsRead.length} workspace file(s) ${what}`);
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string): Artifact => ({ kind: 'security-findings', summary: `security-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace to scan');
      if (evidence.pathsRead.length === 0) return unable('the workspace has no files to scan');
      const result = await scanTree(ws, { files: evidence.pathsRead, signal: ctx.signal });
      const coverage = coverageOf(result);
      if (result.filesScanned === 0) return unable('no text file of the workspace could be scanned');
      ctx.progress(80, coverage);
      let data: SecurityReportData;
      if (action === 'scan') {
        const extra = runTierChecks(ws, evidence.pathsRead, ctx.request.tier, ctx.request.input['advisories']);
        const secretCount = result.findings.length;
        const merged: TreeScanResult = { ...result, findings: sortFindings([...result.findings, ...extra.findings]), suppressed: [...result.suppressed, ...extra.suppressed] };
        const checks: ScanCheck[] = [{ id: 'secrets', tier: 'core', status: 'ran', findings: secretCount }, ...extra.checks];
        data = buildSecurityReport(merged, baselineOf(ctx, ws), `file://${ws}`, extra.limitations, { scope: 'scan', checks, rules: extra.rules });
      } else {
        data = buildSecurityReport(result, baselineOf(ctx, ws), `file://${ws}`, limitations);
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
