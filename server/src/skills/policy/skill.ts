/**
 * policy-ai's embedded skills, deterministic (no model):
 *
 *  - `check`: the workspace's deployment configurations against the baseline and the config's rules
 *    (check.ts), read-only. Violations are findings of the project, never a failed gate of the step.
 *  - `enforce`: check, then the mechanical fixes (enforce.ts). Written into the workspace when ACMF
 *    allows `write_file` (the originals kept in a snapshot file under .cadre/policy/, the rollback), else
 *    proposed as a diff with `applied: false`. Either way the result is re-checked and reports the
 *    counts before and after.
 *
 * The rules of the install reach the step as `input.settings` (the engine's copy of the config's
 * `policy` section); skills never read the config.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, FileChange, Skill, SkillContext } from '../../engine/rigor/skill';
import { proposalDiff } from '../coding/git';
import { WorkspaceFiles } from '../workspace/files';
import { checkTexts, collectFiles, publicReport, readSettings, type CheckFilters, type CheckReport, type CheckedFile, type PolicySettings, type SourceFile } from './check';
import { planFixes, type FilePlan } from './enforce';
import { policyInputSchema } from './inputs';
import type { Violation } from './model';
import { SEVERITY_RANK, type PolicySeverity } from './rules';
import { checkDataSchema, enforceDataSchema } from './schemas';

type Action = 'check' | 'enforce';

interface Prepared {
  files: SourceFile[];
  refused: string[];
  settings: PolicySettings;
  filters: CheckFilters;
  report: CheckReport;
  checked: CheckedFile[];
  plans: FilePlan[];
  problem?: { field: string; message: string };
}

function listOf(v: unknown): string[] | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const raw = Array.isArray(v) ? v.map(String) : String(v).split(',');
  const out = raw.map((s) => s.trim()).filter(Boolean);
  return out.length ? out : undefined;
}

function prepare(ctx: SkillContext): Prepared {
  const input = ctx.request.input;
  const settings = readSettings(input['settings']);
  const empty = { files: [], refused: [], filters: {}, report: undefined as unknown as CheckReport, checked: [], plans: [] };
  if ('error' in settings) return { ...empty, settings: readSettings(undefined) as PolicySettings, problem: { field: 'settings', message: settings.error } };
  const paths = listOf(input['paths']);
  const rules = listOf(input['ruleIds']);
  const severity = typeof input['minSeverity'] === 'string' ? (input['minSeverity'] as PolicySeverity) : undefined;
  const filters: CheckFilters = { ...(rules ? { rules } : {}), ...(severity ? { severity } : {}) };
  const collected = collectFiles(ctx.request.workspace!, paths);
  if (collected.problem) return { ...empty, settings, filters, problem: { field: 'paths', message: collected.problem } };
  const { report, checked } = checkTexts(collected.files, settings, filters);
  const plans = ctx.request.action === 'enforce' ? planFixes(checked, report.violations) : [];
  return { files: collected.files, refused: collected.refused, settings, filters, report, checked, plans };
}

function examinedCount(r: CheckReport): number {
  return r.examined.kubernetes.length + r.examined.dockerfiles.length + r.examined.compose.length;
}

function maxSeverity(vs: readonly Violation[]): number {
  return vs.reduce((m, v) => Math.max(m, SEVERITY_RANK[v.severity]), 0);
}

/** Deterministic checks: high confidence, less when files could not be parsed or read. */
function confidenceOf(r: CheckReport, refused: number): number {
  const total = examinedCount(r) + refused;
  if (!total) return 0.9;
  const bad = new Set(r.problems.map((p) => p.file)).size + refused;
  return Math.round(0.9 * (1 - 0.5 * (bad / total)) * 100) / 100;
}

function where(v: Violation): string {
  return `${v.file}:${v.line}${v.object ? ` ${v.object}` : ''}${v.container ? ` (${v.container})` : ''}`;
}

export function renderReport(title: string, r: CheckReport): string {
  const out = [`# ${title}`, '', `Examined ${examinedCount(r)} file(s), ${r.examined.objects} object(s): ${r.counts.violations} violation(s), ${r.counts.waived} waived.`, ''];
  if (r.violations.length) {
    out.push('| severity | rule | where | message | fix |', '|---|---|---|---|---|');
    for (const v of r.violations) out.push(`| ${v.severity} | ${v.rule} | ${where(v)} | ${v.message.replace(/\|/g, '\\|')} | ${(v.fixable === 'auto' ? v.fix : `${v.fix} (${v.fixNote ?? v.fixable})`).replace(/\|/g, '\\|')} |`);
    out.push('');
  }
  if (r.waived.length) out.push('## Waived', '', ...r.waived.map((w) => `- ${w.rule} ${where(w)}: ${w.waiver.reason}`), '');
  if (r.problems.length) out.push('## Not judged', '', ...r.problems.map((p) => `- ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`), '');
  const disabled = r.rules.filter((x) => x.state === 'disabled').map((x) => x.id);
  if (disabled.length) out.push(`Disabled by $CADRE_HOME/config.yaml: ${disabled.join(', ')}.`, '');
  if (r.notes.length) out.push('## Notes', '', ...r.notes.map((n) => `- ${n}`), '');
  return out.join('\n');
}

function summaryOf(r: CheckReport): string {
  const n = r.counts.violations;
  const sev = (['critical', 'high', 'medium', 'low'] as const).filter((s) => r.counts.bySeverity[s]).map((s) => `${r.counts.bySeverity[s]} ${s}`).join(', ');
  const head = n ? `${n} violation(s) (${sev}): ${r.violations.slice(0, 3).map((v) => `${v.rule} ${v.file}:${v.line}`).join('; ')}${n > 3 ? `; and ${n - 3} more` : ''}` : 'no violation';
  return `${head}${r.counts.waived ? `; ${r.counts.waived} waived` : ''}${r.problems.length ? `; ${r.problems.length} file problem(s): ${r.problems.map((p) => `${p.file}${p.line ? `:${p.line}` : ''}`).join(', ')}` : ''} (examined ${examinedCount(r)} file(s), ${r.examined.objects} object(s))`;
}

const lineCount = (diff: string, sign: '+' | '-') => diff.split('\n').filter((l) => l.startsWith(sign) && !l.startsWith(sign.repeat(3))).length;

/**
 * The snapshot of one step's originals (the rollback): one JSON file, not copies of the manifests, so
 * that the IaC and policy scans of the workspace do not judge the old files again.
 */
function snapshotFile(ctx: SkillContext): string {
  return `.cadre/policy/enforce-${ctx.request.executionId}-s${ctx.request.step}.json`;
}

/** Writes the planned texts, the originals first into the snapshot. Every path is confined to the workspace. */
function writePlans(ctx: SkillContext, plans: readonly FilePlan[]): { snapshot: string; written: string[] } {
  const ws = new WorkspaceFiles(ctx.request.workspace!);
  const snapshot = snapshotFile(ctx);
  const targets = plans.map((p) => {
    const r = ws.resolve(p.file);
    if (!r.ok || !r.rel) throw new Error(`${p.file}: ${r.ok ? 'outside the workspace' : r.reason}; not written`);
    return { plan: p, real: r.real };
  });
  const abs = path.join(ws.root, snapshot);
  // A retried step finds the snapshot of its first attempt: that one holds the originals, it is kept.
  if (!existsSync(abs)) {
    mkdirSync(path.dirname(abs), { recursive: true });
    const files = targets.map((t) => ({ path: t.plan.file, sha256: createHash('sha256').update(t.plan.before).digest('hex'), content: t.plan.before }));
    writeFileSync(abs, JSON.stringify({ format: 'cadre-policy-snapshot/1', executionId: ctx.request.executionId, step: ctx.request.step, files }, null, 2) + '\n');
  }
  for (const t of targets) writeFileSync(t.real, t.plan.after);
  return { snapshot, written: targets.map((t) => t.plan.file) };
}

function brief(v: Violation) {
  return { rule: v.rule, file: v.file, line: v.line, object: v.object, container: v.container };
}

function makePolicySkill(action: Action): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  const kind = `policy-${action}`;
  return {
    agentId: 'policy-ai',
    action,
    inputSchema: policyInputSchema,
    outputSchema: action === 'check' ? checkDataSchema : enforceDataSchema,
    needs: ['workspace'],
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to read deployment configurations from'); return evidence; }
      const p = prepare(ctx);
      prepared.set(evidence, p);
      if (p.problem) { evidence.constraints.push(p.problem.message); return evidence; }
      for (const f of p.files) evidence.items.push({ source: f.file, detail: 'deployment configuration read', weight: 0.8 });
      evidence.pathsRead.push(...p.files.map((f) => f.file));
      evidence.constraints.push(...p.refused, ...p.report.problems.map((x) => `${x.file}${x.line ? `:${x.line}` : ''}: ${x.message}`));
      ctx.progress(50, p.files.length ? 0.7 : 0.3);
      return evidence;
    },
    propose(_ctx, evidence) {
      const p = prepared.get(evidence);
      if (!p || p.problem) return [];
      const out: ProposedAction[] = p.files.length ? [{ kind: 'read', description: 'read the deployment configurations', paths: p.files.map((f) => f.file) }] : [];
      // Only what will run: enforce writes only the files it has a fix for.
      if (action === 'enforce' && p.plans.length) {
        out.push({ kind: 'write_file', description: `apply ${p.plans.reduce((n, x) => n + x.fixed.length, 0)} policy fix(es) to ${p.plans.length} file(s), the originals kept in ${snapshotFile(_ctx)}`, paths: p.plans.map((x) => x.file) });
      }
      return out;
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `policy-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) return unable('no workspace was given to read deployment configurations from');
      const p = prepared.get(evidence) ?? prepare(ctx);
      if (p.problem) return unable(p.problem.message, p.problem.field);
      const r = p.report;
      if (!examinedCount(r)) {
        const why = `no deployment configuration to check: no Kubernetes manifest (YAML with kind and apiVersion), Dockerfile or Compose file in ${listOf(ctx.request.input['paths'])?.join(', ') ?? 'the workspace'}`;
        return { kind, summary: `policy-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const confidence = confidenceOf(r, p.refused.length);
      ctx.progress(80, confidence);
      if (action === 'check') {
        return {
          kind, summary: summaryOf(r), goalRef, confidence, tokens: 0, data: publicReport(r), text: renderReport('policy-ai check', r),
          findingsAfter: { count: r.counts.violations, maxSeverity: maxSeverity(r.violations) },
        };
      }
      return enforce(ctx, p, confidence, kind);
    },
  };
}

async function enforce(ctx: SkillContext, p: Prepared, confidence: number, kind: string): Promise<Artifact> {
  const goalRef = ctx.request.goal.id;
  const before = p.report;
  const fixedIds = new Set(p.plans.flatMap((x) => x.fixed));
  const notFixed = before.violations.filter((v) => !fixedIds.has(v)).map((v) => ({ ...brief(v), fixable: (v.fixable === 'auto' ? 'manual' : v.fixable) as 'needs-value' | 'manual', why: v.fixNote ?? 'the edit did not apply' }));
  if (!p.plans.length) {
    const data = { ...publicReport(before), mode: 'none' as const, before: before.counts, after: before.counts, fixed: [], notFixed, files: [], diff: '', snapshot: null };
    return {
      kind, goalRef, confidence, tokens: 0, data, text: renderReport('policy-ai enforce: nothing to fix automatically', before),
      summary: `nothing to fix automatically: ${summaryOf(before)}`,
      findingsBefore: { count: before.counts.violations, maxSeverity: maxSeverity(before.violations) },
      findingsAfter: { count: before.counts.violations, maxSeverity: maxSeverity(before.violations) },
    };
  }
  const write = ctx.allowed('write_file');
  let snapshot: string | null = null;
  let afterFiles: SourceFile[];
  if (write) {
    const w = writePlans(ctx, p.plans);
    snapshot = w.snapshot;
    // Re-checked from disk: what the workspace holds now, not what was meant to be written.
    const ws = new WorkspaceFiles(ctx.request.workspace!);
    afterFiles = p.files.map((f) => {
      const t = ws.readText(f.file);
      return t.ok ? { file: f.file, text: t.text } : f;
    });
  } else {
    afterFiles = p.files.map((f) => ({ file: f.file, text: p.plans.find((x) => x.file === f.file)?.after ?? f.text }));
  }
  const after = checkTexts(afterFiles, p.settings, p.filters).report;
  const diffs = await Promise.all(p.plans.map((x) => proposalDiff([{ repoPath: x.file, before: x.before, after: x.after }])));
  const diff = diffs.join('');
  const changes: FileChange[] = p.plans.map((x, i) => ({ path: x.file, kind: 'modify', content: x.after, linesAdded: lineCount(diffs[i]!, '+'), linesRemoved: lineCount(diffs[i]!, '-'), applied: write }));
  // Fixed: the violations enforce edited that the re-check no longer finds.
  const key = (v: Violation) => `${v.rule}\u0000${v.file}\u0000${v.object}\u0000${v.container}\u0000${v.message}`;
  const remaining = new Set(after.violations.map(key));
  const fixed = [...fixedIds].filter((v) => !remaining.has(key(v))).map(brief);
  const data = {
    ...publicReport(after), mode: write ? 'written' as const : 'proposed' as const, before: before.counts, after: after.counts, fixed,
    notFixed, files: p.plans.map((x) => x.file), diff, snapshot,
  };
  const counts = `${before.counts.violations} violation(s) before, ${after.counts.violations} after`;
  const summary = write
    ? `${fixed.length} violation(s) fixed in ${p.plans.length} file(s) (${p.plans.map((x) => x.file).join(', ')}): ${counts}; originals kept in ${snapshot}${notFixed.length ? `; ${notFixed.length} not auto-fixable` : ''}`
    : `${fixed.length} fix(es) proposed as a diff, nothing written (ACMF did not allow write_file): ${counts} once applied${notFixed.length ? `; ${notFixed.length} not auto-fixable` : ''}`;
  return {
    kind, summary, goalRef, confidence, tokens: 0, data, changes,
    text: `${renderReport(`policy-ai enforce (${write ? 'written' : 'proposed'}): after the fixes`, after)}\n\n\`\`\`diff\n${diff}\`\`\`\n`,
    findingsBefore: { count: before.counts.violations, maxSeverity: maxSeverity(before.violations) },
    findingsAfter: { count: after.counts.violations, maxSeverity: maxSeverity(after.violations) },
    ...(write ? {
      pathsWritten: [...p.plans.map((x) => x.file), snapshot!],
      actionsTaken: [{ kind: 'write_file', description: `applied ${fixed.length} policy fix(es) to ${p.plans.length} file(s); originals in ${snapshot}`, paths: p.plans.map((x) => x.file) }],
      rollback: { kind: 'snapshot' as const, ref: snapshot! },
    } : {}),
  };
}

export const checkSkill: Skill = makePolicySkill('check');
export const enforceSkill: Skill = makePolicySkill('enforce');
