/**
 * deploy-ai `readiness`: may the workspace be deployed? Seven checks, each pass / fail / unknown with
 * its evidence and a fix the editor can run: clean tree, branch pushed (real git, no network: the
 * local remote-tracking ref), tests and last review (facts only the engine knows, passed in by the
 * door), coverage (lcov / istanbul json-summary against a threshold), open critical findings (the
 * secret scanner at critical severity) and pending approvals (passed in by the door).
 * Nothing is invented: a fact that cannot be established is `unknown` with what was looked at.
 */
import { existsSync } from 'node:fs';
import { ClientCommands, type ReadinessCheck, type ReadinessCheckId } from '../../../../protocol/lsp';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { git, repoInfo } from '../coding/git';
import { scanTree } from '../security/scanner';
import { readCoverage } from '../testing/index';

export const READINESS_CHECK_IDS: readonly ReadinessCheckId[] = ['clean-tree', 'branch-pushed', 'tests', 'coverage', 'critical-findings', 'review', 'approvals'];
export const DEFAULT_COVERAGE_THRESHOLD = 80;

/** The last tester-ai `test` execution, as the door found it in the engine. */
export interface ReadinessTestsFact {
  executionId: string;
  status: string;
  passed: number | null;
  failed: number | null;
  skipped?: number | null;
  finishedAt: string | null;
}

/** The last review-ai execution, as the door found it in the engine. */
export interface ReadinessReviewFact {
  executionId: string;
  status: string;
  /** The Review gates passed and the review itself found nothing blocking. */
  passed: boolean;
  finishedAt: string | null;
  findings?: number | null;
}

/** What the door passes in `input` (all optional: a missing fact is reported `unknown`). */
export interface ReadinessInput {
  tests?: ReadinessTestsFact | null;
  review?: ReadinessReviewFact | null;
  pendingApprovals?: number | null;
  coverageThreshold?: number;
}

export interface ReadinessData {
  ready: boolean;
  checkedAt: string;
  checks: ReadinessCheck[];
  git: { branch: string | null; head: string | null; headTime: string | null } | null;
}

const TITLES: Record<ReadinessCheckId, string> = {
  'clean-tree': 'Clean working tree',
  'branch-pushed': 'Branch pushed',
  tests: 'Tests pass',
  coverage: 'Coverage',
  'critical-findings': 'No open critical findings',
  review: 'Review passed',
  approvals: 'No pending approvals',
};

const invoke = (agentId: string, action: string, title: string) => ({ title, command: ClientCommands.invokeAgent, arguments: [agentId, action] });

function check(id: ReadinessCheckId, status: ReadinessCheck['status'], evidence: string, fix?: ReadinessCheck['fix']): ReadinessCheck {
  return { id, title: TITLES[id], status, evidence, ...(fix && status !== 'pass' ? { fix } : {}) };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

interface GitFacts {
  repo: boolean;
  top?: string;
  head?: string;
  headTime?: number;
  branch?: string;
  status?: string;
  upstream?: string;
  ahead?: number;
  behind?: number;
  error?: string;
}

async function gitFacts(ws: string, signal?: AbortSignal): Promise<GitFacts> {
  const info = await repoInfo(ws);
  if (!info) return { repo: false };
  const facts: GitFacts = { repo: true, top: info.top, ...(info.head ? { head: info.head } : {}) };
  const status = await git(ws, ['status', '--porcelain', '--untracked-files=normal', '--', '.'], signal);
  if (status.code === 0) facts.status = status.stdout;
  else facts.error = status.stderr.trim();
  if (info.head) {
    const t = await git(ws, ['show', '-s', '--format=%ct', 'HEAD'], signal);
    if (t.code === 0) facts.headTime = Number(t.stdout.trim()) * 1000;
  }
  const branch = await git(ws, ['symbolic-ref', '-q', '--short', 'HEAD'], signal);
  if (branch.code === 0) facts.branch = branch.stdout.trim();
  const up = await git(ws, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}'], signal);
  if (up.code === 0 && up.stdout.trim()) {
    facts.upstream = up.stdout.trim();
    const counts = await git(ws, ['rev-list', '--left-right', '--count', 'HEAD...@{upstream}'], signal);
    const m = /^(\d+)\s+(\d+)/.exec(counts.stdout.trim());
    if (counts.code === 0 && m) {
      facts.ahead = Number(m[1]);
      facts.behind = Number(m[2]);
    }
  }
  return facts;
}

function cleanTree(g: GitFacts): ReadinessCheck {
  if (!g.repo) return check('clean-tree', 'unknown', 'the workspace is not a git repository (git rev-parse found none)');
  if (g.status === undefined) return check('clean-tree', 'unknown', `git status failed: ${g.error ?? 'no output'}`);
  const lines = g.status.split('\n').filter(Boolean);
  if (lines.length === 0) return check('clean-tree', 'pass', `git status: nothing to commit${g.branch ? ` on ${g.branch}` : ''}`);
  const untracked = lines.filter((l) => l.startsWith('??')).length;
  const files = lines.slice(0, 3).map((l) => l.slice(3)).join(', ');
  return check('clean-tree', 'fail', `git status: ${lines.length - untracked} changed, ${untracked} untracked file(s) (${files}${lines.length > 3 ? ', …' : ''})`,
    { title: 'Commit or stash the changes', command: 'workbench.view.scm' });
}

function branchPushed(g: GitFacts): ReadinessCheck {
  const push = { title: 'Push the branch', command: 'git.push' };
  if (!g.repo) return check('branch-pushed', 'unknown', 'the workspace is not a git repository');
  if (!g.head) return check('branch-pushed', 'fail', 'the branch has no commit yet', { title: 'Commit the changes', command: 'workbench.view.scm' });
  if (!g.branch) return check('branch-pushed', 'fail', `HEAD is detached at ${g.head.slice(0, 8)}: no branch to push`, { title: 'Check out a branch', command: 'workbench.view.scm' });
  if (!g.upstream) return check('branch-pushed', 'fail', `branch ${g.branch} has no upstream (never pushed)`, { title: 'Publish the branch', command: 'git.push' });
  if (g.ahead === undefined) return check('branch-pushed', 'unknown', `could not compare ${g.branch} with ${g.upstream}`);
  const behind = g.behind ? `; ${g.behind} commit(s) behind` : '';
  if (g.ahead > 0) return check('branch-pushed', 'fail', `${g.branch} is ${g.ahead} commit(s) ahead of ${g.upstream} (as last fetched)${behind}`, push);
  return check('branch-pushed', 'pass', `${g.branch} is up to date with ${g.upstream} (as last fetched)${behind}`);
}

const ago = (iso: string | null) => (iso ? ` at ${iso}` : '');

function testsCheck(t: ReadinessTestsFact | null, headTime: number | undefined): ReadinessCheck {
  const run = invoke('tester-ai', 'test', 'Run the tests with tester-ai');
  if (!t) return check('tests', 'unknown', 'no tester-ai test run recorded by this engine', run);
  const counts = t.passed !== null || t.failed !== null ? `${t.passed ?? 0} passed, ${t.failed ?? 0} failed` : 'no parsed results';
  const where = `tester-ai test ${t.executionId} (${t.status})${ago(t.finishedAt)}: ${counts}`;
  if (t.status !== 'completed' || (t.failed ?? 0) > 0) {
    if (t.status === 'in_progress' || t.status === 'queued' || t.status === 'awaiting_approval') return check('tests', 'unknown', `${where}; still running`, run);
    return check('tests', 'fail', where, run);
  }
  if (t.passed === null && t.failed === null) return check('tests', 'unknown', where, run);
  if (headTime !== undefined && t.finishedAt && Date.parse(t.finishedAt) < headTime) return check('tests', 'fail', `${where}; ran before the last commit (${new Date(headTime).toISOString()})`, run);
  return check('tests', 'pass', where);
}

function coverageCheck(ws: string, threshold: number): ReadinessCheck {
  const fix = invoke('tester-ai', 'coverage', 'Measure coverage with tester-ai');
  let cov: ReturnType<typeof readCoverage>;
  try {
    cov = readCoverage(ws, {});
  } catch (err) {
    return check('coverage', 'unknown', `the coverage report could not be read: ${(err as Error).message}`, fix);
  }
  if (!cov) return check('coverage', 'unknown', 'no coverage report (coverage/coverage-summary.json, coverage/lcov.info or lcov.info)', fix);
  const pct = cov.report.lines;
  const evidence = `line coverage ${pct}% in ${cov.source} (threshold ${threshold}%)`;
  return pct >= threshold ? check('coverage', 'pass', evidence) : check('coverage', 'fail', evidence, invoke('tester-ai', 'generate-tests', 'Generate tests with tester-ai'));
}

async function criticalFindings(ws: string, signal?: AbortSignal): Promise<ReadinessCheck> {
  const r = await scanTree(ws, signal ? { signal } : {});
  const critical = r.findings.filter((f) => f.severity === 'critical');
  const scanned = `secret scan of ${r.filesScanned} of ${r.filesConsidered} file(s)`;
  if (critical.length === 0) return check('critical-findings', 'pass', `${scanned}: no critical finding`);
  const where = critical.slice(0, 3).map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`).join(', ');
  return check('critical-findings', 'fail', `${scanned}: ${critical.length} critical finding(s) (${where}${critical.length > 3 ? ', …' : ''})`,
    { title: 'Show the findings', command: 'workbench.actions.view.problems' });
}

function reviewCheck(r: ReadinessReviewFact | null, headTime: number | undefined): ReadinessCheck {
  const fix = invoke('review-ai', 'review', 'Review with review-ai');
  if (!r) return check('review', 'unknown', 'no review-ai execution recorded by this engine', fix);
  const where = `review-ai ${r.executionId} (${r.status})${ago(r.finishedAt)}${typeof r.findings === 'number' ? `, ${r.findings} finding(s)` : ''}`;
  if (r.status === 'in_progress' || r.status === 'queued' || r.status === 'awaiting_approval') return check('review', 'unknown', `${where}; still running`, fix);
  if (!r.passed) return check('review', 'fail', `${where}: did not pass`, fix);
  if (headTime !== undefined && (!r.finishedAt || Date.parse(r.finishedAt) < headTime)) return check('review', 'fail', `${where}: passed, but before the last commit (${new Date(headTime).toISOString()})`, fix);
  return check('review', 'pass', `${where}: passed${headTime !== undefined ? ' after the last commit' : ''}`);
}

function approvalsCheck(n: number | null): ReadinessCheck {
  if (n === null) return check('approvals', 'unknown', 'the number of pending approvals was not given');
  if (n === 0) return check('approvals', 'pass', 'no pending ACMF approval');
  return check('approvals', 'fail', `${n} pending ACMF approval(s)`, { title: 'Open the approvals', command: ClientCommands.focusApprovals });
}

export function parseReadinessInput(input: Record<string, unknown>): Required<Pick<ReadinessInput, 'coverageThreshold'>> & { tests: ReadinessTestsFact | null; review: ReadinessReviewFact | null; pendingApprovals: number | null } {
  const t = obj(input['tests']);
  const r = obj(input['review']);
  const threshold = num(input['coverageThreshold']);
  return {
    tests: t && typeof t['executionId'] === 'string'
      ? { executionId: t['executionId'], status: String(t['status'] ?? 'unknown'), passed: num(t['passed']), failed: num(t['failed']), skipped: num(t['skipped']), finishedAt: typeof t['finishedAt'] === 'string' ? t['finishedAt'] : null }
      : null,
    review: r && typeof r['executionId'] === 'string'
      ? { executionId: r['executionId'], status: String(r['status'] ?? 'unknown'), passed: r['passed'] === true, finishedAt: typeof r['finishedAt'] === 'string' ? r['finishedAt'] : null, findings: num(r['findings']) }
      : null,
    pendingApprovals: num(input['pendingApprovals']),
    coverageThreshold: threshold !== null && threshold >= 0 && threshold <= 100 ? threshold : DEFAULT_COVERAGE_THRESHOLD,
  };
}

/** Runs the seven checks on `workspace`. */
export async function readinessChecks(workspace: string, input: Record<string, unknown>, signal?: AbortSignal, now = () => new Date()): Promise<ReadinessData> {
  const p = parseReadinessInput(input);
  const g = await gitFacts(workspace, signal);
  const checks = [
    cleanTree(g),
    branchPushed(g),
    testsCheck(p.tests, g.headTime),
    coverageCheck(workspace, p.coverageThreshold),
    await criticalFindings(workspace, signal),
    reviewCheck(p.review, g.headTime),
    approvalsCheck(p.pendingApprovals),
  ];
  return {
    ready: checks.every((c) => c.status === 'pass'),
    checkedAt: now().toISOString(),
    checks,
    git: g.repo ? { branch: g.branch ?? null, head: g.head ?? null, headTime: g.headTime !== undefined ? new Date(g.headTime).toISOString() : null } : null,
  };
}

export function renderReadiness(d: ReadinessData): string {
  const mark = { pass: '✓', fail: '✗', unknown: '?' } as const;
  return [
    d.ready ? 'Ready to deploy.' : `Not ready: ${d.checks.filter((c) => c.status === 'fail').length} failing, ${d.checks.filter((c) => c.status === 'unknown').length} unknown.`,
    ...d.checks.map((c) => `${mark[c.status]} ${c.title}: ${c.evidence}`),
  ].join('\n');
}

export const readinessSkill: Skill = {
  agentId: 'deploy-ai',
  action: 'readiness',
  needs: ['workspace'],
  async research(ctx: SkillContext): Promise<Evidence> {
    const ws = ctx.request.workspace;
    const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
    if (!ws || !existsSync(ws)) {
      evidence.constraints.push('no workspace to check');
      return evidence;
    }
    const info = await repoInfo(ws);
    evidence.items.push(info ? { source: 'git', detail: `git repository at ${info.top}`, weight: 0.6 } : { source: 'git', detail: 'not a git repository', weight: 0.2 });
    const p = parseReadinessInput(ctx.request.input);
    if (p.tests) evidence.items.push({ source: 'engine', detail: `last tester-ai test ${p.tests.executionId}`, weight: 0.3 });
    if (p.review) evidence.items.push({ source: 'engine', detail: `last review-ai ${p.review.executionId}`, weight: 0.3 });
    ctx.progress(30);
    return evidence;
  },
  propose(ctx) {
    if (!ctx.request.workspace) return [];
    return [
      { kind: 'git_status', description: 'read the git status, branch and upstream of the workspace' },
      { kind: 'scan', description: 'scan the workspace for critical secrets and read its coverage report' },
    ];
  },
  async generate(ctx): Promise<Artifact> {
    const goalRef = ctx.request.goal.id;
    const ws = ctx.request.workspace;
    if (!ws || !existsSync(ws)) {
      const why = 'no workspace was given to check';
      return { kind: 'readiness-report', summary: `deploy-ai readiness: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, tokens: 0 };
    }
    const data = await readinessChecks(ws, ctx.request.input, ctx.signal);
    // Confidence: how many of the seven facts could be established (unknown checks lower it).
    const known = data.checks.filter((c) => c.status !== 'unknown').length;
    const confidence = Math.round((0.5 + (0.45 * known) / data.checks.length) * 100) / 100;
    const failing = data.checks.filter((c) => c.status === 'fail').length;
    ctx.progress(100, confidence);
    return {
      kind: 'readiness-report', goalRef, confidence, data, tokens: 0,
      summary: data.ready ? 'Ready to deploy' : `${failing} failing check(s), ${data.checks.length - known} unknown`,
      text: renderReadiness(data),
    };
  },
};

