/**
 * tester-ai's embedded skills: `test`, `coverage` and `generate-tests`, with no network and no model.
 * With a language model, `generate-tests` asks it to fill the skeletons' bodies; each file it returns
 * must be one of the skeletons and parse (the TypeScript parser), else that skeleton stays as is.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Artifact, Evidence, FileChange, Skill, SkillContext } from '../../engine/rigor/skill';
import { askModel, evidenceText, fallbackLine, type ModelNote } from '../../llm/skill-model';
import { checkCode } from '../coding/syntax';
import { parseGoJson, parseIstanbulFinal, parseIstanbulSummary, parseJestJson, parseJUnit, parseLcov, parseMochaJson, parseNodeCoverage, parseTap, parseTextSummary, type CoverageReport, type TestResults } from './parsers';
import { coverageRun, detectRunner, runCommand, type DetectedRunner, type RunResult } from './runner';
import { detectStyle, findUntested, listFiles, skeletonChanges, type Untested } from './untested';
import { coderBranchOf, coderProposalNote, type CoderBranch } from '../review/branch';
import { checkoutState } from '../coding/git';
import { checkoutCommit } from './worktree';
import { WorkspaceFiles } from '../workspace/files';

export * from './parsers';
export * from './runner';
export * from './untested';
export { checkoutCommit, type TestCheckout } from './worktree';

export const DEFAULT_TIMEOUT_MS = 5 * 60 * 1000;

export interface TestingData {
  runner: { name: string; command: string; detectedBy: string } | null;
  results: { passed: number; failed: number; skipped: number; failures: TestResults['failures']; format?: string; complete?: boolean; exitCode?: number | null; timedOut?: boolean } | null;
  coverage: { lines: number; source: string; files: Array<{ file: string; pct: number; linesFound: number; linesHit: number }> } | null;
  untested: Untested;
  durationMs: number;
  /** Last lines of the output when nothing could be parsed, or on a timeout. */
  outputTail?: string;
}

/** Parses the output of a run in the runner's format first, then any format that fits. */
export function parseRunOutput(runner: DetectedRunner, run: RunResult, workspace: string): TestResults | undefined {
  const all = `${run.stdout}\n${run.stderr}`;
  if (runner.format === 'junit-file') {
    const merged = readJUnitFiles(workspace, runner.junitPaths ?? []);
    if (merged) return merged;
  }
  const byFormat: Record<string, () => TestResults | undefined> = {
    tap: () => parseTap(run.stdout), 'mocha-json': () => parseMochaJson(run.stdout), 'jest-json': () => parseJestJson(run.stdout) ?? parseJestJson(run.stderr), 'go-json': () => parseGoJson(run.stdout),
  };
  return byFormat[runner.format]?.() ?? parseMochaJson(run.stdout) ?? parseJestJson(all) ?? parseGoJson(run.stdout) ?? parseTap(run.stdout) ?? parseTextSummary(all);
}

function readJUnitFiles(workspace: string, rels: string[]): TestResults | undefined {
  const files: string[] = [];
  for (const rel of rels) {
    const abs = path.join(workspace, rel);
    try {
      if (statSync(abs).isDirectory()) for (const f of readdirSync(abs)) { if (f.endsWith('.xml')) files.push(path.join(abs, f)); }
      else files.push(abs);
    } catch { /* not written */ }
  }
  let acc: TestResults | undefined;
  const confined = new WorkspaceFiles(workspace);
  for (const f of files.slice(0, 500)) {
    // A report path (or a file of a report folder) that resolves outside the workspace is not read.
    const text = confined.readText(f);
    const r = text.ok ? parseJUnit(text.text) : undefined;
    if (!r) continue;
    acc = acc ? { ...acc, passed: acc.passed + r.passed, failed: acc.failed + r.failed, skipped: acc.skipped + r.skipped, failures: [...acc.failures, ...r.failures] } : r;
  }
  return acc;
}

/** Coverage from input.lcov / input.coverageSummary, the usual report files, or the run's own output (node --test). */
export function readCoverage(workspace: string, input: Record<string, unknown>, output?: string): { report: CoverageReport; source: string } | undefined {
  const candidates: Array<[string, (t: string) => CoverageReport | undefined]> = [];
  if (typeof input['coverageSummary'] === 'string') candidates.push([input['coverageSummary'], parseIstanbulSummary]);
  if (typeof input['lcov'] === 'string') candidates.push([input['lcov'], parseLcov]);
  if (typeof input['coverageFinal'] === 'string') candidates.push([input['coverageFinal'], parseIstanbulFinal]);
  // nyc, c8 and jest write these under coverage/ (json-summary, lcov, json reporters).
  candidates.push(['coverage/coverage-summary.json', parseIstanbulSummary], ['coverage/lcov.info', parseLcov], ['coverage/coverage-final.json', parseIstanbulFinal], ['lcov.info', parseLcov]);
  const confined = new WorkspaceFiles(workspace);
  for (const [rel, parse] of candidates) {
    const abs = path.resolve(workspace, rel);
    // input.lcov / input.coverageSummary only inside the workspace (never read elsewhere).
    const text = confined.readText(rel);
    if (!text.ok) continue;
    const r = parse(text.text);
    if (r) return { report: r, source: path.relative(workspace, abs) || rel };
  }
  const fromOut = output ? parseNodeCoverage(output) : undefined;
  return fromOut ? { report: fromOut, source: 'test output (node --test coverage)' } : undefined;
}

type Action = 'test' | 'coverage' | 'generate-tests';

const filledSchema = z.object({ files: z.array(z.object({ path: z.string().trim().min(1), content: z.string().min(1).max(200_000) })).min(1).max(50) });

const FILL_SYSTEM = [
  'You are tester-ai. Fill in the bodies of the test skeletons given, for the functions they name, in the same test style and imports.',
  'Test only behaviour the source shows; keep each file complete. Never put credentials in tests.',
  'Answer with JSON only: {"files":[{"path":"<the skeleton path>","content":"<the whole test file>"}]}',
].join('\n');

/** Skeletons with bodies written by the model, where its file parses; the others stay skeletons. */
async function fillSkeletons(ctx: SkillContext, evidence: Evidence, ws: string, skeletons: FileChange[], fns: Untested['functions']): Promise<{ changes: FileChange[]; note?: ModelNote; filled: string[]; kept: Array<{ path: string; reason: string }> }> {
  const sources = [...new Set(fns.map((f) => f.file))].slice(0, 10).map((f) => {
    try { return `--- ${f}\n${readFileSync(path.join(ws, f), 'utf8').slice(0, 12_000)}`; } catch { return ''; }
  }).filter(Boolean);
  const answer = await askModel(ctx, {
    system: FILL_SYSTEM,
    user: `Skeletons:\n${skeletons.map((c) => `--- ${c.path}\n${c.content}`).join('\n\n')}\n\nSources:\n${sources.join('\n\n')}\n\n${evidenceText(evidence)}`,
    schema: filledSchema,
  });
  if (!answer) return { changes: skeletons, filled: [], kept: [] };
  if (!answer.ok) return { changes: skeletons, note: answer.note, filled: [], kept: skeletons.map((c) => ({ path: c.path, reason: answer.reason })) };
  const byPath = new Map(answer.value.files.map((f) => [f.path.replace(/^\.\//, ''), f.content]));
  const filled: string[] = [];
  const kept: Array<{ path: string; reason: string }> = [];
  const changes = skeletons.map((c): FileChange => {
    const content = byPath.get(c.path);
    if (content === undefined) { kept.push({ path: c.path, reason: 'the model returned no body for it' }); return c; }
    const syntax = checkCode(c.path, content);
    if (!syntax) { kept.push({ path: c.path, reason: 'no parser to verify the model\'s code for this language' }); return c; }
    if (!syntax.ok) { kept.push({ path: c.path, reason: `the model's code does not parse: ${syntax.reason}` }); return c; }
    filled.push(c.path);
    const text = content.endsWith('\n') ? content : `${content}\n`;
    return { ...c, content: text, linesAdded: text.split('\n').length - 1 };
  });
  const note: ModelNote = filled.length ? answer.note : { ...answer.note, used: false, fallback: kept.map((k) => `${k.path}: ${k.reason}`).slice(0, 5).join('; ') };
  return { changes, note, filled, kept };
}

interface Prepared { runner?: DetectedRunner; workspace?: string; }

function tail(s: string, lines = 40): string { return s.split('\n').slice(-lines).join('\n'); }

interface SourcesDigest { digest: string; files: Array<{ path: string; sha256: string }>; byPath: Map<string, string> }

/** The content hashes of the workspace's source and test files (what a test run must leave alone). */
function sourcesDigest(ws: string, listed: { sources: string[]; tests: string[] }): SourcesDigest {
  const files = [...listed.sources, ...listed.tests].sort().map((p) => {
    let sha = 'missing';
    try { sha = createHash('sha256').update(readFileSync(path.join(ws, p))).digest('hex'); } catch { /* deleted */ }
    return { path: p, sha256: sha };
  });
  const digest = createHash('sha256').update(files.map((f) => `${f.path}\0${f.sha256}`).join('\n')).digest('hex');
  return { digest, files, byPath: new Map(files.map((f) => [f.path, f.sha256])) };
}

function prepare(ctx: SkillContext, ws: string): Prepared {
  const cmd = ctx.request.input['command'];
  const runner = detectRunner(ws, typeof cmd === 'string' || Array.isArray(cmd) ? (cmd as string | string[]) : undefined);
  return { workspace: ws, ...(runner ? { runner } : {}) };
}

function makeSkill(action: Action): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  const runs = action !== 'generate-tests';
  return {
    agentId: 'tester-ai',
    action,
    needs: ['workspace'],
    async research(ctx) {
      const ws = ctx.request.workspace;
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to test'); return evidence; }
      const p = prepare(ctx, ws);
      const runner = p.runner;
      prepared.set(evidence, p);
      if (runner) {
        evidence.items.push({ source: runner.detectedBy.split(':')[0]!, detail: `runner ${runner.name}: ${runner.command} (${runner.detectedBy})`, weight: 0.8 });
        for (const f of ['package.json', 'pytest.ini', 'pyproject.toml', 'go.mod', 'pom.xml', 'build.gradle']) if (existsSync(path.join(ws, f))) evidence.pathsRead.push(f);
      } else evidence.constraints.push('no test runner detected (package.json scripts.test / devDependencies, pytest, go.mod, pom.xml, build.gradle)');
      const coder = runs ? coderBranchOf(ctx.request.previous) : undefined;
      if (coder) evidence.items.push({ source: `step ${coder.step} coder-ai`, detail: `the code to test is on branch ${coder.branch} (commit ${coder.commit.slice(0, 12)}): the tests run there, in a temporary worktree`, weight: 0.5 });
      const proposed = runs && !coder ? coderProposalNote(ctx.request.previous) : undefined;
      if (proposed) evidence.constraints.push(proposed);
      ctx.progress(30, runner ? 0.5 : 0.1);
      return evidence;
    },
    propose(ctx, evidence) {
      const p = prepared.get(evidence);
      const acts = [{ kind: 'read', description: 'read the workspace sources, tests and coverage reports' }];
      const coder = runs ? coderBranchOf(ctx.request.previous) : undefined;
      const where = coder ? ` on coder-ai's branch ${coder.branch} (commit ${coder.commit.slice(0, 12)}) in a temporary worktree` : '';
      if (runs && p?.runner) return [...acts, { kind: 'run_command', description: `run the test command: ${p.runner.command}${where}` }];
      return acts;
    },
    async generate(ctx, evidence) {
      const coder = runs ? coderBranchOf(ctx.request.previous) : undefined;
      const ws = ctx.request.workspace;
      if (!coder || !ws || !existsSync(ws) || !ctx.allowed('run_command')) return generateIn(ctx, evidence);
      return onBranch(ctx, ws, coder, (dir) => generateIn(ctx, evidence, dir));
    },
  };

  /** The step's work in `at` (a checkout of coder-ai's commit), else in the workspace. */
  async function generateIn(ctx: SkillContext, evidence: Evidence, at?: string): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const started = Date.now();
      // In a checkout, the runner is detected there (coder-ai may have changed package.json). Evidence
      // read back from a checkpoint is a copy: detect the runner again.
      const p = at ? prepare(ctx, at) : prepared.get(evidence) ?? (ctx.request.workspace && existsSync(ctx.request.workspace) ? prepare(ctx, ctx.request.workspace) : {});
      const ws = p.workspace ?? ctx.request.workspace;
      const kind = action === 'generate-tests' ? 'test-skeletons' : action === 'coverage' ? 'coverage-report' : 'test-report';
      const unable = (why: string, data: unknown = null): Artifact => ({ kind, summary: `tester-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data, unable: why, tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to test');
      const runner = p.runner;
      const listed = listFiles(ws);
      const input = ctx.request.input;

      let run: RunResult | undefined;
      let results: TestResults | undefined;
      let sourcesBefore: SourcesDigest | undefined;
      if (runs) {
        if (!runner) {
          // A project without tests is "nothing to do" for a test run, not a failure of tester-ai:
          // the step is skipped with its reason and the execution goes on (outcome not_applicable).
          const why = 'no test runner detected: no package.json scripts.test or test devDependency (mocha, jest, vitest, ava, node --test), no pytest config, go.mod, pom.xml or build.gradle';
          return { kind, summary: `tester-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: { runner: null }, notApplicable: why, tokens: 0 };
        }
        if (!ctx.allowed('run_command')) {
          // Without the run, coverage can still come from existing reports.
          if (action === 'test') return unable(`running the test command (${runner.command}) was not allowed by ACMF`, { runner: { name: runner.name, command: runner.command, detectedBy: runner.detectedBy } });
        } else {
          const timeoutMs = typeof input['timeoutMs'] === 'number' && input['timeoutMs'] > 0 ? input['timeoutMs'] : DEFAULT_TIMEOUT_MS;
          const how = action === 'coverage' ? coverageRun(runner, ws) : { argv: runner.argv, shell: runner.shell, env: runner.env };
          ctx.progress(40);
          sourcesBefore = sourcesDigest(ws, listed);
          run = await runCommand(how.argv, { cwd: ws, timeoutMs, signal: ctx.signal, ...(how.shell ? { shell: true } : {}), ...(how.env ? { env: how.env } : {}) });
          if (run.aborted) throw ctx.signal.reason ?? new Error('aborted');
          if (runner.name === 'pytest') results = readJUnitFiles(ws, runner.junitPaths ?? []);
          results ??= parseRunOutput(runner, run, ws);
          if (runner.name === 'pytest') try { rmSync(path.join(ws, runner.junitPaths![0]!), { force: true }); } catch { /* ignore */ }
          ctx.progress(75);
        }
      }
      const cov = readCoverage(ws, input, run ? `${run.stdout}\n${run.stderr}` : undefined);
      const untested = findUntested(ws, cov?.report, listed);
      const runnerData = runner ? { name: runner.name, command: runner.command, detectedBy: runner.detectedBy } : null;
      const isTest = (f: string) => listed.tests.includes(f) || /\.(test|spec)\./.test(f);
      const covData = cov ? { lines: cov.report.lines, source: cov.source, files: cov.report.files.filter((f) => !isTest(f.file)).map((f) => ({ file: f.file, pct: f.pct, linesFound: f.linesFound, linesHit: f.linesHit })) } : null;
      const data: TestingData = {
        runner: runnerData,
        results: results ? { passed: results.passed, failed: results.failed, skipped: results.skipped, failures: results.failures, format: results.format, complete: results.complete, ...(run ? { exitCode: run.exitCode, timedOut: run.timedOut } : {}) } : null,
        coverage: covData,
        untested: { basis: untested.basis, files: untested.files, functions: untested.functions },
        durationMs: Date.now() - started,
      };
      if (run && (run.timedOut || !results)) data.outputTail = tail(`${run.stdout}\n${run.stderr}`);

      if (run?.timedOut) {
        const ms = typeof input['timeoutMs'] === 'number' ? input['timeoutMs'] : DEFAULT_TIMEOUT_MS;
        return { ...unable(`the test command (${runner!.command}) did not finish within ${ms} ms and its process tree was killed`, data), data };
      }
      if (run?.spawnError) return unable(`the test command could not be started: ${run.spawnError}`, data);

      if (action === 'generate-tests') {
        const sample = listed.tests.slice(0, 5).map((t) => { try { return readFileSync(path.join(ws, t), 'utf8').slice(0, 4000); } catch { return ''; } }).join('\n');
        const style = detectStyle(runner?.name, sample);
        const skeletons = skeletonChanges(ws, untested.functions, style, listed.tests);
        const n = untested.functions.length;
        const confidence = Math.min(0.9, 0.5 + (listed.tests.length ? 0.2 : 0) + (runner ? 0.1 : 0) + (cov ? 0.1 : 0));
        const fill = skeletons.length && ctx.model ? await fillSkeletons(ctx, evidence, ws, skeletons, untested.functions) : undefined;
        const changes = fill?.changes ?? skeletons;
        const note = fill?.note;
        const summary = n ? `${changes.length} test skeleton(s) (${style}) for ${n} exported function(s) no test mentions` : 'every exported function is mentioned by a test; no skeleton needed';
        return {
          kind, goalRef, confidence, tokens: 0,
          summary: note ? `${summary}; ${fill!.filled.length ? `${fill!.filled.length} filled in by the language model (${note.model ?? note.provider})` : 'the language model answer was not usable: skeletons only'}` : summary,
          data: { ...data, style, skeletons: changes.map((c) => c.path), ...(note ? { filled: fill!.filled, keptSkeletons: fill!.kept, llm: note } : {}) },
          changes,
          text: changes.map((c) => `// ${c.path}\n${c.content}`).join('\n') + (note && !note.used ? `\n${fallbackLine(note)}` : ''),
        };
      }

      if (action === 'coverage' && !cov) return unable(run ? 'the test run produced no coverage report (coverage/lcov.info, coverage/coverage-summary.json or node --test coverage output)' : 'no coverage report found (coverage/lcov.info or coverage/coverage-summary.json) and running the tests was not allowed', data);
      if (action === 'test' && !results) return { ...unable(`the output of ${runner!.command} could not be parsed as TAP, JUnit XML, mocha/jest JSON or a summary line (exit code ${run?.exitCode ?? 'none'})`, data), data };

      // Confidence from evidence: a complete structured parse that agrees with the exit code is high.
      // A runner's summary line ("59 passed, 0 failed") that agrees with the exit code is complete
      // evidence for the counts too (0.8: only the per-test details are missing); it was 0.55, below
      // the 0.6 gate, and demoted tester-ai for correct runs (issue 10). A summary the exit code
      // contradicts stays low (0.35).
      let confidence = 0.4;
      if (results) {
        const agrees = run ? (run.exitCode === 0) === (results.failed === 0) : true;
        confidence = results.complete ? 0.85 : agrees ? 0.8 : 0.55;
        if (!agrees) confidence -= 0.2;
        if (run?.truncated) confidence -= 0.1;
        if (results.passed + results.failed + results.skipped === 0) confidence -= 0.2;
      }
      if (cov) confidence += action === 'coverage' ? 0.45 : 0.05;
      confidence = Math.max(0.05, Math.min(0.95, Math.round(confidence * 100) / 100));

      const parts: string[] = [];
      if (results) parts.push(`${results.passed} passed, ${results.failed} failed, ${results.skipped} skipped`);
      if (cov) parts.push(`line coverage ${cov.report.lines}%`);
      if (untested.functions.length || untested.files.length) parts.push(`${untested.files.length} untested file(s), ${untested.functions.length} untested exported function(s)`);
      const artifact: Artifact = {
        kind, goalRef, confidence, data, tokens: 0,
        summary: `${runner ? `${runner.name}: ` : ''}${parts.join('; ')}`,
        text: renderReport(data),
        ...(results ? { tests: { passed: results.passed, failed: results.failed, skipped: results.skipped } } : {}),
        ...(cov ? { coverage: cov.report.lines } : {}),
        ...(run ? { actionsTaken: [{ kind: 'run_command', description: `run the test command: ${runner!.command}` }] } : {}),
      };
      if (run && sourcesBefore) {
        // A test run changes nothing to roll back when the sources and tests are byte-identical
        // afterwards; the Review's rollback gate fails (as it should) when the run changed them.
        const after = sourcesDigest(ws, listed);
        const changed = sourcesBefore.files.filter((f) => after.byPath.get(f.path) !== f.sha256).map((f) => f.path);
        if (changed.length === 0) artifact.rollback = { kind: 'snapshot', ref: `sha256:${sourcesBefore.digest.slice(0, 16)} (${sourcesBefore.files.length} source and test files, unchanged by the run)` };
        else artifact.summary += `; the test run changed ${changed.length} source/test file(s): ${changed.slice(0, 5).join(', ')}`;
      }
      return artifact;
  }
}

/**
 * Runs `work` in a temporary worktree of coder-ai's commit and says in the artifact which branch and
 * commit were tested, and that the user's checkout (HEAD, branch, status) is as it was.
 */
async function onBranch(ctx: SkillContext, ws: string, coder: CoderBranch, work: (dir: string) => Promise<Artifact>): Promise<Artifact> {
  const before = await checkoutState(ws);
  // Not this agent's failure when coder-ai's commit cannot be checked out: an error, not a finding.
  const checkout = await checkoutCommit(ws, coder.commit, ctx.signal).catch((e: unknown) => {
    throw new Error(`could not check out coder-ai's commit ${coder.commit.slice(0, 12)} (branch ${coder.branch}) in a temporary worktree: ${(e as Error).message}`);
  });
  let artifact: Artifact;
  try {
    artifact = await work(checkout.dir);
  } finally {
    await checkout.remove();
  }
  const after = await checkoutState(ws);
  const untouched = before.head === after.head && before.ref === after.ref && before.status === after.status;
  const testedOn = { branch: coder.branch, commit: coder.commit, base: coder.base, step: coder.step, worktree: 'temporary, removed after the run', linked: checkout.linked.map((l) => path.basename(l)), userCheckoutUntouched: untouched };
  const data = artifact.data && typeof artifact.data === 'object' ? { ...(artifact.data as Record<string, unknown>), testedOn } : { testedOn };
  const summary = `${artifact.summary}; tested coder-ai's branch ${coder.branch} at ${coder.commit.slice(0, 12)} in a temporary worktree${untouched ? '' : ' (the user\'s checkout changed during the run)'}`;
  return { ...artifact, summary, data, text: `Tested: branch ${coder.branch}, commit ${coder.commit}\n${artifact.text ?? ''}` };
}

export function renderReport(d: TestingData): string {
  const out: string[] = [];
  if (d.runner) out.push(`Runner: ${d.runner.name} — \`${d.runner.command}\` (${d.runner.detectedBy})`);
  if (d.results) {
    out.push(`Results: ${d.results.passed} passed, ${d.results.failed} failed, ${d.results.skipped} skipped`);
    for (const f of d.results.failures.slice(0, 50)) {
      out.push(`  ✗ ${f.name}${f.file ? ` (${f.file}${f.line ? `:${f.line}` : ''})` : ''}: ${f.message.split('\n')[0]}`);
      if (f.expected !== undefined || f.actual !== undefined) out.push(`      expected ${(f.expected ?? '?').replace(/\s*\n\s*/g, ' ')}, actual ${(f.actual ?? '?').replace(/\s*\n\s*/g, ' ')}`);
    }
  }
  if (d.coverage) {
    out.push(`Line coverage: ${d.coverage.lines}% (${d.coverage.source})`);
    for (const f of [...d.coverage.files].sort((a, b) => a.pct - b.pct).slice(0, 20)) out.push(`  ${f.pct}%  ${f.file}`);
  }
  if (d.untested.files.length) out.push(`Untested files (${d.untested.basis}): ${d.untested.files.slice(0, 50).join(', ')}`);
  if (d.untested.functions.length) out.push(`Exported functions no test mentions: ${d.untested.functions.slice(0, 50).map((f) => `${f.file}:${f.line} ${f.name}`).join(', ')}`);
  return out.join('\n');
}

export const testSkill: Skill = makeSkill('test');
export const coverageSkill: Skill = makeSkill('coverage');
export const generateTestsSkill: Skill = makeSkill('generate-tests');
export const testingSkills: Skill[] = [testSkill, coverageSkill, generateTestsSkill];
