/**
 * review-ai's embedded skills: `review` (BUILD: the workspace's git diff, or given files) and
 * `verify` (OPERATE: the same analysis restricted to the files a fix changed). No network, no model.
 */
import * as path from 'node:path';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import {
  applySuppressions, countBySeverity, maxSeverity, parseSuppressions, sortFindings, toSarif, toWorkspacePath,
  type Finding, type Suppression,
} from '../findings/index';
import { analyzeFile, DEFAULT_OPTIONS, isJsTs, isSourceFile, type ChangedLines, type ReviewOptions } from './analyze';
import { isGitRepo, validRef, workspaceDiff } from './git';
import { branchDiff, coderBranchOf, coderProposalNote, hasCommit, type Blob, type CoderBranch } from './branch';
import { REVIEW_RULES, RULE_FAMILIES, RULE_SEVERITY } from './rules';
import { listTree, missingTests } from './tests-lookup';
import { WorkspaceFiles } from '../workspace/files';
import { fingerprint } from '../findings/finding';
import { proposeReads } from '../read-proposal';
import { includeVendored, VendoredFiles } from '../code-analysis/index';

export { analyzeFile, analyzeJsTs, analyzeOther, DEFAULT_OPTIONS, languageOf } from './analyze';
export type { ChangedLines, FileAnalysis, FunctionInfo, ReviewOptions } from './analyze';
export { parseUnifiedZero, workspaceDiff } from './git';
export { coderBranchOf, type CoderBranch } from './branch';
export { isTestFile, missingTests } from './tests-lookup';
export { REVIEW_RULES } from './rules';

const MAX_FILE_BYTES = 2 * 1024 * 1024;

export interface ReviewTarget {
  file: string;
  /** null = the whole file. */
  changed: ChangedLines | null;
}

export interface ReviewPlan {
  mode: 'diff' | 'files';
  base?: string;
  targets: ReviewTarget[];
  /** Every file of the workspace (for the missing-tests lookup). */
  allFiles: string[];
  unable?: string;
  /** The request lacks what the review needs (none of the named files exists): outcome needs_input. */
  needsInput?: { field: string };
  /** Nothing to review (verify in a workflow whose earlier steps changed nothing): outcome not_applicable. */
  notApplicable?: string;
  /** Named files that do not exist in the workspace (reported, not reviewed). */
  missing?: string[];
  /** A coder-ai branch of the execution is reviewed: `base` is the commit it started from. */
  branch?: { name: string; commit: string };
  /** File contents read from that branch's commit (never from the working tree). */
  blobs?: Map<string, Blob>;
}

export interface FileSummary {
  file: string;
  language: string;
  checks: string[];
  functions: number;
  changedFunctions: number;
  maxComplexity: number;
  /** Why the file was not analyzed (deleted, binary, too large, unreadable). */
  skipped?: string;
}

export interface ReviewData {
  mode: 'diff' | 'files';
  base?: string;
  /** The coder-ai branch reviewed (its commit's diff against `base`), when a BUILD step made one. */
  branch?: string;
  commit?: string;
  findings: Finding[];
  suppressed: Array<{ ruleId: string; file: string; line: number; reason: string }>;
  files: FileSummary[];
  counts: { bySeverity: Record<string, number>; byRule: Record<string, number>; total: number };
  coverage: { reviewed: number; parsed: number; unparseable: number; regexOnly: number; ratio: number };
  sarif: Record<string, unknown>;
}

export interface ReviewResult {
  data: ReviewData;
  complexity?: { max: number; where: string };
  confidence: number;
}

function stringList(v: unknown): string[] {
  if (typeof v === 'string' && v.trim()) return v.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(v)) return v.flatMap((x) => (typeof x === 'string' ? [x] : x && typeof x === 'object' ? stringList((x as Record<string, unknown>)['path'] ?? (x as Record<string, unknown>)['file']) : []));
  return [];
}

/**
 * Files a previous step changed: data.changes[].path, data.pathsWritten, data.changedFiles, and the
 * `files` of an agent that writes code. Never the files a step only examined (observe-ai's logs, a
 * scan's file list): verify reviews a fix.
 */
export function filesFromPrevious(ctx: SkillContext): string[] {
  const out: string[] = [];
  for (const p of ctx.request.previous) {
    const d = p.data as Record<string, unknown> | null;
    if (!d || typeof d !== 'object') continue;
    out.push(...stringList(d['changes']), ...stringList(d['pathsWritten']), ...stringList(d['changedFiles']));
    // The agents that write code name what they wrote in `files` (coder-ai's branch or proposal).
    if (CODE_WRITERS.has(p.agentId)) out.push(...stringList(d['files']));
  }
  return [...new Set(out)];
}

/** Agents whose step data's `files` are files they wrote (others list files they examined). */
const CODE_WRITERS: ReadonlySet<string> = new Set(['coder-ai', 'maintain-ai', 'debug-ai']);

function num(v: unknown, fallback: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

export function reviewOptions(input: Record<string, unknown>): ReviewOptions {
  return {
    complexityThreshold: num(input['complexityThreshold'], DEFAULT_OPTIONS.complexityThreshold),
    maxFunctionLines: num(input['maxFunctionLines'], DEFAULT_OPTIONS.maxFunctionLines),
    includeVendored: includeVendored(input),
  };
}

/** Workspace-relative path of a given file, or undefined when it leaves the workspace. */
function relInside(workspace: string, file: string): string | undefined {
  const rel = path.relative(workspace, path.resolve(workspace, file));
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return toWorkspacePath(rel);
}

/** What to review: the given files (whole), else the git diff of the workspace. */
export async function planReview(workspace: string | undefined, files: string[], base: string, signal?: AbortSignal): Promise<ReviewPlan> {
  if (!workspace) return { mode: files.length ? 'files' : 'diff', targets: [], allFiles: [], unable: 'no workspace to review' };
  const git = await isGitRepo(workspace, signal);
  if (files.length) {
    const inside = files.map((f) => relInside(workspace, f));
    const outside = files.filter((_f, i) => !inside[i]);
    if (outside.length) return { mode: 'files', targets: [], allFiles: [], unable: `files outside the workspace: ${outside.join(', ')}` };
    // A named file that is not there is the user's typo, not a clean review: when none exists the
    // step needs input (naming them); otherwise the others are reviewed and the missing ones reported.
    const confined = new WorkspaceFiles(workspace);
    const named = [...new Set(inside as string[])];
    const missing = named.filter((f) => { const r = confined.resolve(f); return !r.ok && r.reason === 'not found'; });
    if (missing.length === named.length) {
      return { mode: 'files', targets: [], allFiles: [], missing, needsInput: { field: 'files' }, unable: `${missing.length === 1 ? 'the named file does not exist' : 'none of the named files exists'} in the workspace: ${missing.join(', ')}` };
    }
    const allFiles = git ? (await workspaceDiff(workspace, base, signal)).allFiles : listTree(workspace);
    const present = named.filter((f) => !missing.includes(f));
    return { mode: 'files', targets: present.map((file) => ({ file, changed: null })), allFiles, ...(missing.length ? { missing } : {}) };
  }
  if (!git) return { mode: 'diff', targets: [], allFiles: [], unable: 'the workspace is not a git repository and no files were given (input.files)' };
  if (!validRef(base)) return { mode: 'diff', targets: [], allFiles: [], unable: `invalid base ref "${base}"` };
  const d = await workspaceDiff(workspace, base, signal);
  return { mode: 'diff', base, targets: d.files, allFiles: d.allFiles };
}

/**
 * What to review when an earlier step of the execution committed on a coder-ai branch: that commit's
 * diff against the commit it started from (or the given files as the commit holds them), read from
 * git objects. The user's working tree, index and HEAD are not read or touched.
 */
export async function planBranchReview(workspace: string | undefined, b: CoderBranch, files: string[], signal?: AbortSignal): Promise<ReviewPlan> {
  const branch = { name: b.branch, commit: b.commit };
  const mode = files.length ? 'files' as const : 'diff' as const;
  if (!workspace) return { mode, targets: [], allFiles: [], branch, unable: 'no workspace to review' };
  if (!(await isGitRepo(workspace, signal))) return { mode, targets: [], allFiles: [], branch, unable: `coder-ai committed on branch ${b.branch}, but the workspace is not a git repository` };
  if (!(await hasCommit(workspace, b.commit, signal))) return { mode, targets: [], allFiles: [], branch, unable: `coder-ai's commit ${b.commit.slice(0, 12)} (branch ${b.branch}) is not in the workspace's repository` };
  const inside = files.map((f) => relInside(workspace, f));
  const outside = files.filter((_f, i) => !inside[i]);
  if (outside.length) return { mode, targets: [], allFiles: [], branch, unable: `files outside the workspace: ${outside.join(', ')}` };
  const d = await branchDiff(workspace, b, [...new Set(inside as string[])], signal);
  return { mode, base: b.base, targets: d.files, allFiles: d.allFiles, branch, blobs: d.blobs };
}

/** A file of the workspace, read through its confinement: a symlink out or a protected file is not read. */
function readText(files: WorkspaceFiles, rel: string): { text?: string; skipped?: string } {
  const r = files.readBytes(rel, MAX_FILE_BYTES);
  if (!r.ok) {
    return { skipped: r.reason === 'too large' ? 'larger than 2 MB' : r.reason === 'not found' ? 'deleted or unreadable' : `${r.reason}, not read` };
  }
  if (r.buf.subarray(0, 8000).includes(0)) return { skipped: 'binary' };
  return { text: r.buf.toString('utf8') };
}

function inScope(changed: ChangedLines | null, f: Finding): boolean {
  if (!changed) return true;
  for (let l = f.range.startLine; l <= f.range.endLine; l++) if (changed.added.has(l)) return true;
  return false;
}

/** Runs the checks over a plan. */
export function runReview(workspace: string, plan: ReviewPlan, options: ReviewOptions, signal?: AbortSignal, progress?: (pct: number) => void): ReviewResult {
  const findings: Finding[] = [];
  const files: FileSummary[] = [];
  const directives = new Map<string, Suppression[]>();
  const changedOf = new Map<string, ChangedLines | null>();
  let parsed = 0;
  let unparseable = 0;
  let regexOnly = 0;
  let best: { max: number; where: string } | undefined;
  const reviewedSources: string[] = [];
  const confined = new WorkspaceFiles(workspace);
  // Third-party, minified and generated files are not the user's code: listed as skipped, not reviewed.
  const vendored = options.includeVendored ? undefined : new VendoredFiles(workspace, (rel) => readText(confined, rel).text);
  plan.targets.forEach((t, i) => {
    if (signal?.aborted) throw new Error('review aborted');
    const { text, skipped } = plan.blobs ? (plan.blobs.get(t.file) ?? { skipped: 'not in the reviewed commit' }) : readText(confined, t.file);
    if (text === undefined) {
      files.push({ file: t.file, language: 'unknown', checks: [], functions: 0, changedFunctions: 0, maxComplexity: 0, skipped });
      return;
    }
    const why = vendored?.reason(t.file, text);
    if (why) {
      files.push({ file: t.file, language: 'unknown', checks: [], functions: 0, changedFunctions: 0, maxComplexity: 0, skipped: `vendored, minified or generated (${why}); input.includeVendored reviews it` });
      return;
    }
    const a = analyzeFile(t.file, text, t.changed, options);
    const dirs = parseSuppressions(text);
    if (dirs.length) directives.set(t.file, dirs);
    changedOf.set(t.file, t.changed);
    findings.push(...a.findings);
    const changedFns = a.functions.filter((f) => f.changed);
    const maxC = changedFns.reduce((m, f) => Math.max(m, f.complexity), 0);
    for (const f of changedFns) if (!best || f.complexity > best.max) best = { max: f.complexity, where: `${t.file}:${f.startLine} ${f.name}` };
    if (isJsTs(t.file)) (a.parsed ? parsed++ : unparseable++);
    else if (isSourceFile(t.file)) regexOnly++;
    if (isSourceFile(t.file)) reviewedSources.push(t.file);
    const checks = isSourceFile(t.file) ? [...a.checks, 'missing-tests'] : a.checks;
    files.push({ file: t.file, language: a.language, checks, functions: a.functions.length, changedFunctions: changedFns.length, maxComplexity: maxC });
    progress?.(Math.round(((i + 1) / plan.targets.length) * 90));
  });
  for (const file of missingTests(reviewedSources, plan.allFiles)) {
    findings.push({
      ruleId: 'review/missing-tests', severity: RULE_SEVERITY['review/missing-tests'], file,
      message: `${file} changed but no test file of the same name exists (*.test.*, *.spec.*, __tests__/, test/)`,
      range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 1 },
      fingerprint: fingerprint('review/missing-tests', file),
    });
  }
  const sup = applySuppressions(findings, directives, RULE_FAMILIES);
  const kept = sortFindings([...sup.kept, ...sup.invalid.filter((f) => inScope(changedOf.get(f.file) ?? null, f))]);
  const byRule: Record<string, number> = {};
  for (const f of kept) byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  const reviewed = parsed + unparseable + regexOnly;
  // JS/TS parsed: full analysis (1); other source languages: regex checks only (0.4); unparseable: 0.
  const ratio = reviewed === 0 ? 1 : (parsed + 0.4 * regexOnly) / reviewed;
  const confidence = Math.round((0.3 + 0.65 * ratio) * 100) / 100;
  const data: ReviewData = {
    mode: plan.mode,
    ...(plan.base ? { base: plan.base } : {}),
    ...(plan.branch ? { branch: plan.branch.name, commit: plan.branch.commit } : {}),
    findings: kept,
    suppressed: sup.suppressed.map((s) => ({ ruleId: s.finding.ruleId, file: s.finding.file, line: s.finding.range.startLine, reason: s.reason })),
    files,
    counts: { bySeverity: countBySeverity(kept), byRule, total: kept.length },
    coverage: { reviewed, parsed, unparseable, regexOnly, ratio: Math.round(ratio * 1000) / 1000 },
    sarif: toSarif(kept, REVIEW_RULES, { toolName: 'cadre-review-ai' }),
  };
  return { data, ...(best ? { complexity: best } : {}), confidence };
}

/** Readable report: rule, place and message only (snippets and code stay out). */
export function renderReviewReport(data: ReviewData, title: string): string {
  const out = [`# ${title}`, ''];
  const what = data.branch
    ? `branch ${data.branch} at ${data.commit?.slice(0, 12)}, ${data.mode === 'diff' ? `git diff ${data.base?.slice(0, 12)}..${data.branch}` : 'given files'}`
    : data.mode === 'diff' ? `git diff against ${data.base ?? 'HEAD'}` : 'given files';
  out.push(`${data.files.length} file(s) reviewed (${what}); ${data.counts.total} finding(s).`);
  const sev = Object.entries(data.counts.bySeverity).filter(([, n]) => n > 0).map(([s, n]) => `${s} ${n}`).join(', ');
  if (sev) out.push(`By severity: ${sev}.`);
  out.push('', '## Files');
  for (const f of data.files) {
    out.push(f.skipped ? `- ${f.file}: skipped (${f.skipped})`
      : `- ${f.file} [${f.language}]: ${f.functions} function(s), max complexity ${f.maxComplexity}; checks: ${f.checks.join(', ') || 'none'}`);
  }
  if (data.findings.length) {
    out.push('', '## Findings');
    for (const f of data.findings) out.push(`- [${f.severity}] ${f.ruleId} ${f.file}:${f.range.startLine}: ${f.message}${f.fix ? ` (fix: ${f.fix.description})` : ''}`);
  }
  if (data.suppressed.length) {
    out.push('', '## Suppressed');
    for (const s of data.suppressed) out.push(`- ${s.ruleId} ${s.file}:${s.line}: ${s.reason}`);
  }
  return out.join('\n');
}

function makeReviewSkill(action: 'review' | 'verify'): Skill {
  const plans = new WeakMap<Evidence, ReviewPlan>();
  const verify = action === 'verify';
  const filesFor = (ctx: SkillContext): string[] => {
    const given = stringList(ctx.request.input['files']);
    return given.length || !verify ? given : filesFromPrevious(ctx);
  };
  const plan = async (ctx: SkillContext): Promise<ReviewPlan> => {
    const files = filesFor(ctx);
    if (verify && files.length === 0) {
      // In a workflow whose earlier steps changed nothing there is no fix to verify; asked directly, the files are needed.
      if (ctx.request.step > 0 || ctx.request.previous.length > 0) {
        return { mode: 'files', targets: [], allFiles: [], notApplicable: 'nothing to verify: no earlier step of the execution changed a file' };
      }
      return { mode: 'files', targets: [], allFiles: [], unable: 'no changed files to verify (input.files or a previous step\'s changes)', needsInput: { field: 'files' } };
    }
    const base = typeof ctx.request.input['base'] === 'string' ? String(ctx.request.input['base']) : 'HEAD';
    // In a BUILD chain the code to review is on coder-ai's branch, not in the user's working tree.
    const coder = typeof ctx.request.input['base'] === 'string' ? undefined : coderBranchOf(ctx.request.previous);
    if (coder) return planBranchReview(ctx.request.workspace, coder, files, ctx.signal);
    return planReview(ctx.request.workspace, files, base, ctx.signal);
  };
  return {
    agentId: 'review-ai',
    action,
    needs: ['workspace'],
    async research(ctx) {
      const p = await plan(ctx);
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      plans.set(evidence, p);
      if (p.unable || p.notApplicable) {
        evidence.constraints.push((p.unable ?? p.notApplicable)!);
        return evidence;
      }
      const sources = p.targets.filter((t) => isSourceFile(t.file)).length;
      evidence.items.push({
        source: p.branch ? `coder-ai branch ${p.branch.name} (${p.branch.commit.slice(0, 12)})${p.mode === 'diff' ? `: git diff ${p.base?.slice(0, 12)}..${p.branch.commit.slice(0, 12)}` : ''}`
          : p.mode === 'diff' ? `git diff ${p.base ?? 'HEAD'}` : verify && !stringList(ctx.request.input['files']).length ? 'previous steps' : 'input.files',
        detail: `${p.targets.length} file(s) to review, ${sources} source file(s)`,
        weight: p.targets.length ? sources / p.targets.length : 0.5,
      });
      if (!p.blobs && ctx.request.workspace) {
        // Files that resolve outside the workspace (a symlink out) or to protected data are not read.
        const confined = new WorkspaceFiles(ctx.request.workspace);
        p.targets = p.targets.filter((t) => {
          const r = confined.resolve(t.file);
          if (!r.ok && r.reason !== 'not found') evidence.constraints.push(`${t.file}: ${r.reason}, not read`);
          return r.ok || r.reason === 'not found';
        });
      }
      evidence.pathsRead.push(...p.targets.map((t) => t.file));
      const proposed = p.branch ? undefined : coderProposalNote(ctx.request.previous);
      if (proposed) evidence.constraints.push(proposed);
      ctx.progress(20);
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeReads(evidence, 'read the changed files to review them');
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const p = plans.get(evidence) ?? (await plan(ctx));
      if (p.notApplicable) {
        return { kind: 'verification', summary: `review-ai ${action}: not applicable: ${p.notApplicable}`, goalRef, confidence: 1, data: { findings: [] }, notApplicable: p.notApplicable, tokens: 0 };
      }
      if (p.unable || !ctx.request.workspace) {
        const why = p.unable ?? 'no workspace to review';
        return { kind: 'review', summary: `review-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: { findings: [] }, unable: why, ...(p.needsInput ? { needsInput: p.needsInput } : {}), tokens: 0 };
      }
      if (p.mode === 'diff' && !p.branch && p.targets.length === 0) {
        // Diff mode with nothing changed is "nothing to do", not a failed review: the step is skipped
        // with its reason and the execution goes on (outcome not_applicable, issue 10).
        const why = `nothing changed since ${p.base ?? 'the base'}`;
        return { kind: 'review', summary: `review-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: { findings: [] }, notApplicable: why, tokens: 0 };
      }
      const r = runReview(ctx.request.workspace, p, reviewOptions(ctx.request.input), ctx.signal, (pct) => ctx.progress(pct));
      const d = r.data;
      const worst = maxSeverity(d.findings);
      const high = d.counts.bySeverity['critical']! + d.counts.bySeverity['high']!;
      const on = d.branch ? ` on branch ${d.branch} (commit ${d.commit?.slice(0, 12)}${d.mode === 'diff' ? `, diff against ${d.base?.slice(0, 12)}` : ''})` : '';
      const notFound = p.missing?.length ? `; not found in the workspace: ${p.missing.join(', ')}` : '';
      const summary = (d.files.length === 0
        ? `no changes to review${on || (d.base ? ` against ${d.base}` : '')}`
        : `${d.files.length} file(s) reviewed${on}: ${d.counts.total} finding(s)${high ? ` (${high} high or critical)` : ''}${r.complexity ? `; max complexity ${r.complexity.max} in ${r.complexity.where}` : ''}`) + notFound;
      const artifact: Artifact = {
        kind: verify ? 'verification' : 'review',
        summary,
        goalRef,
        confidence: r.confidence,
        data: d,
        text: renderReviewReport(d, verify ? 'Verification of the fix' : 'Code review'),
        findingsAfter: { count: d.counts.total, maxSeverity: Math.max(0, worst) },
        ...(r.complexity ? { complexity: r.complexity } : {}),
        tokens: 0,
      };
      if (verify) {
        // Findings an earlier review reported in these files, for the no-regression gate.
        const reviewed = new Set(d.files.map((f) => f.file));
        const before = ctx.request.previous.flatMap((s) => {
          const f = (s.data as { findings?: unknown } | null)?.findings;
          return Array.isArray(f) ? (f as Finding[]).filter((x) => x && typeof x.file === 'string' && reviewed.has(x.file)) : [];
        });
        if (ctx.request.previous.some((s) => Array.isArray((s.data as { findings?: unknown } | null)?.findings))) {
          artifact.findingsBefore = { count: before.length, maxSeverity: Math.max(0, maxSeverity(before)) };
        }
      }
      ctx.progress(100, r.confidence);
      return artifact;
    },
  };
}

export const reviewSkill: Skill = makeReviewSkill('review');
export const verifySkill: Skill = makeReviewSkill('verify');
export const reviewSkills: Skill[] = [reviewSkill, verifySkill];
