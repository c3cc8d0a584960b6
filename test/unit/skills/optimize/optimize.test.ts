import { strict as assert } from 'node:assert';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import {
  benchmarkSkill, compare, mannWhitneyP, optimizeAnalyzeSkill, parseBenchInput, parseProfile, parseProfProcess, stats, summarize, type AnalyzeProfileData, type BenchData,
} from '../../../../server/src/skills/optimize/index';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/optimize');
const dirs: string[] = [];

function ws(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-optimize-'));
  dirs.push(dir);
  for (const [name, from] of Object.entries(files)) cpSync(path.join(FIX, from), path.join(dir, name));
  return dir;
}

const run = (action: 'analyze' | 'benchmark', workspace: string, input: Record<string, unknown> = {}, allowed: (k: string) => boolean = () => true) =>
  runSkill(action === 'analyze' ? optimizeAnalyzeSkill : benchmarkSkill, skillContext({ agentId: 'optimize-ai', action, workspace, input, tier: 'pro', allowed }));

describe('optimize-ai analyze and benchmark', function () {
  this.timeout(30_000);
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('both are embedded skills of optimize-ai', () => {
    assert.ok(skills.includes(optimizeAnalyzeSkill) && skills.includes(benchmarkSkill));
    assert.deepEqual([optimizeAnalyzeSkill.action, benchmarkSkill.action], ['analyze', 'benchmark']);
  });

  describe('profiles', () => {
    it('a real node --cpu-prof profile: slowHash at hot.js:4 holds the self time, main > hashAll > slowHash the total', () => {
      const p = parseProfile(readFileSync(path.join(FIX, 'hot.cpuprofile'), 'utf8'));
      assert.ok(p.ok);
      const s = summarize(p.profile);
      const top = s.functions[0]!;
      assert.equal(top.function, 'slowHash');
      assert.match(top.location, /test\/fixtures\/optimize\/hot\.js:4$/);
      assert.ok(top.selfShare > 0.9, String(top.selfShare));
      const main = s.functions.find((f) => f.function === 'main');
      const mainTotal = main?.totalShare ?? summarize(p.profile, 1000).functions.find((f) => f.function === 'main')!.totalShare;
      assert.ok(mainTotal >= top.selfShare, 'main is on the stack of every slowHash sample');
      assert.deepEqual(s.paths[0]!.frames.slice(-3).map((f) => f.split(' ')[0]), ['main', 'hashAll', 'slowHash']);
      // Time is the sum of the sample deltas: within 5% of the profile's own start..end.
      const raw = JSON.parse(readFileSync(path.join(FIX, 'hot.cpuprofile'), 'utf8')) as { startTime: number; endTime: number };
      assert.ok(Math.abs(s.durationMs - (raw.endTime - raw.startTime) / 1000) / s.durationMs < 0.05, `${s.durationMs}`);
    });

    it('a Chrome trace with ProfileChunk events: the chunks joined, the same hot function found, the other thread named', () => {
      const p = parseProfile(readFileSync(path.join(FIX, 'hot.trace.json'), 'utf8'));
      assert.ok(p.ok, p.ok ? '' : p.message);
      assert.equal(p.profile.format, 'chrome-trace');
      const s = summarize(p.profile);
      assert.equal(s.functions[0]!.function, 'slowHash');
      assert.match(s.functions[0]!.location, /hot\.js:4$/);
      assert.equal(s.others.length, 1);
    });

    it('a node --prof-process report: self ticks per function (optimized and baseline code merged), callers from the heavy profile, the hot path', () => {
      const r = parseProfProcess(readFileSync(path.join(FIX, 'hot.prof.txt'), 'utf8'));
      assert.ok(r.ok, r.ok ? '' : r.message);
      const s = r.summary;
      assert.equal(s.format, 'prof-process');
      const top = s.functions[0]!;
      assert.deepEqual([top.function, top.line], ['slowHash', 4]);
      assert.match(top.location, /hot\.js:4$/);
      assert.ok(top.selfShare > 0.9, String(top.selfShare));
      const main = s.functions.find((f) => f.function === 'main');
      assert.ok(main && main.selfMs === 0 && main.totalShare >= top.selfShare - 0.01, JSON.stringify(main));
      assert.deepEqual(s.paths[0]!.frames.slice(-3).map((f) => f.split(' ')[0]), ['main', 'hashAll', 'slowHash']);
      const bad = parseProfProcess('Statistical profiling result from x.log\n');
      assert.ok(!bad.ok && bad.line === 1);
    });

    it('what is not a profile says what it is, with the line of a JSON error', () => {
      const bad = parseProfile('{"nodes": [\n  {"id": 1,\n  oops }\n]}');
      assert.ok(!bad.ok);
      assert.equal(bad.line, 3);
      const prof = parseProfile('v8-version,11,3,244,8,0,0\nshared-library,"/usr/bin/node"\n');
      assert.ok(!prof.ok && /--prof log/.test(prof.message));
      const other = parseProfile('{"hello": 1}');
      assert.ok(!other.ok && /neither a V8 CPU profile/.test(other.message));
      const trace = parseProfile('{"traceEvents": [{"name": "RunTask", "ph": "X", "ts": 1}]}');
      assert.ok(!trace.ok && /without JavaScript samples/.test(trace.message));
    });
  });

  describe('analyze', () => {
    it('finds the planted hot spot with its location, self and total time; a completed, confident result', async () => {
      const { artifact, proposed, evidence } = await run('analyze', ws({ 'hot.cpuprofile': 'hot.cpuprofile' }));
      assert.equal(artifact.unable, undefined, artifact.summary);
      const d = artifact.data as AnalyzeProfileData;
      assert.equal(d.hotSpots.length, 1);
      assert.deepEqual([d.hotSpots[0]!.function, d.hotSpots[0]!.severity, d.hotSpots[0]!.file], ['slowHash', 'high', 'hot.cpuprofile']);
      assert.match(artifact.summary, /^1 hot spot\(s\): slowHash at file:\/\/.*hot\.js:4 self 9\d\.\d%/);
      assert.deepEqual(artifact.findingsAfter, { count: 1, maxSeverity: 3 });
      assert.ok(artifact.confidence >= 0.75);
      assert.deepEqual(evidence.pathsRead, ['hot.cpuprofile']);
      assert.deepEqual(proposed.map((p) => p.kind), ['read', 'analyze']);
      assert.match(artifact.text!, /main \(.*\) > hashAll \(.*\) > slowHash/);
      const check = optimizeAnalyzeSkill.outputSchema!.safeParse(artifact.data);
      assert.ok(check.success, check.success ? '' : check.error.message);
      assert.ok(!optimizeAnalyzeSkill.outputSchema!.safeParse({ ...d, threshold: 2 }).success, 'the schema checks something');
    });

    it('the clean twin (a program waiting on a timer) raises nothing and says what it examined', async () => {
      const { artifact } = await run('analyze', ws({ 'idle.cpuprofile': 'idle.cpuprofile' }));
      const d = artifact.data as AnalyzeProfileData;
      assert.deepEqual(d.hotSpots, []);
      assert.match(artifact.summary, /^nothing found: no function of the program has 10% or more of the profiled time; examined 1 profile\(s\), \d+ samples/);
      assert.deepEqual(artifact.findingsAfter, { count: 0, maxSeverity: 0 });
      assert.ok(d.examined.busyMs < d.examined.durationMs / 2, 'mostly idle');
    });

    it('a --prof-process report in the workspace is analyzed like a profile', async () => {
      const { artifact } = await run('analyze', ws({ 'hot.prof.txt': 'hot.prof.txt' }), { profile: 'hot.prof.txt' });
      assert.equal(artifact.unable, undefined, artifact.summary);
      const d = artifact.data as AnalyzeProfileData;
      assert.deepEqual([d.profiles[0]!.format, d.hotSpots[0]!.function, d.hotSpots.length], ['prof-process', 'slowHash', 1]);
      const check = optimizeAnalyzeSkill.outputSchema!.safeParse(artifact.data);
      assert.ok(check.success, check.success ? '' : check.error.message);
    });

    it('input.threshold lowers the bar; a named trace is read', async () => {
      const { artifact } = await run('analyze', ws({ 'idle.cpuprofile': 'idle.cpuprofile' }), { threshold: 0.005 });
      assert.ok((artifact.data as AnalyzeProfileData).hotSpots.length > 0, 'at 0.5% the node internals show');
      const t = await run('analyze', ws({ 'p/trace.json': 'hot.trace.json' }), { profile: 'p/trace.json' });
      assert.equal((t.artifact.data as AnalyzeProfileData).hotSpots[0]!.function, 'slowHash');
    });

    it('no profile: not applicable with where it looked; a bad or outside file: needs input naming it', async () => {
      const none = await run('analyze', ws());
      assert.equal(none.artifact.notApplicable, 'no CPU profile to analyze: looked for input.profile, *.cpuprofile in the workspace (not node_modules/.git)');
      const dir = ws();
      writeFileSync(path.join(dir, 'broken.cpuprofile'), '{\n"nodes": [\n,]\n}');
      const bad = await run('analyze', dir);
      assert.deepEqual(bad.artifact.needsInput, { field: 'files' });
      assert.match(bad.artifact.unable!, /^broken\.cpuprofile:3: not JSON/);
      const outside = await run('analyze', ws(), { profile: path.join(FIX, 'hot.cpuprofile') });
      assert.deepEqual(outside.artifact.needsInput, { field: 'profile' });
      assert.match(outside.artifact.unable!, /hot\.cpuprofile is outside the workspace; not read$/);
    });
  });

  describe('benchmark', () => {
    it('stats and the Mann-Whitney test on known values', () => {
      assert.deepEqual(stats([1, 2, 3, 4, 100]), { runs: 5, minMs: 1, medianMs: 3, maxMs: 100, meanMs: 22, stddevMs: 43.618 });
      // Fully separated samples of 5 and 5: U = 0, z = (12.5 - 0.5) / 4.787 = 2.507, p = 0.0122.
      assert.equal(Math.round(mannWhitneyP([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) * 1000) / 1000, 0.012);
      assert.ok(mannWhitneyP([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]) > 0.5);
      assert.deepEqual(compare([20, 21, 22, 23, 24], [10, 11, 12, 13, 14]), { ratio: 1.833, pValue: 0.0122, verdict: 'slower' });
    });

    it('input: command required (string or argv), runs bounded', () => {
      assert.deepEqual(parseBenchInput({}), { ok: false, field: 'command', message: 'no command to benchmark: give input.command (a command line or an argv array)' });
      assert.deepEqual(parseBenchInput({ command: 'x', runs: 1 }), { ok: false, field: 'runs', message: 'input.runs must be an integer from 2 to 200' });
      const ok = parseBenchInput({ command: ['node', '-e', 'x()'] });
      assert.ok(ok.ok && ok.input.runs === 10 && !ok.input.command.shell && ok.input.command.display === "node -e 'x()'");
    });

    it('runs the command and the baseline interleaved through runCommand: a 150 ms sleep is slower than a 20 ms one', async () => {
      const { artifact, proposed } = await run('benchmark', ws(), {
        command: ['sleep', '0.15'], baseline: 'sleep 0.02', runs: 10, warmup: 0,
      });
      assert.equal(artifact.unable, undefined, artifact.summary);
      assert.deepEqual(proposed.map((p) => p.kind), ['run_command']);
      const d = artifact.data as BenchData;
      assert.equal(d.samplesMs.command.length, 10);
      assert.equal(d.samplesMs.baseline.length, 10);
      assert.ok(d.commandStats.minMs <= d.commandStats.medianMs && d.commandStats.medianMs <= d.commandStats.maxMs);
      assert.ok(d.comparison!.ratio > 1, JSON.stringify(d.comparison));
      assert.equal(d.comparison!.verdict, 'slower', JSON.stringify(d.samplesMs));
      assert.match(artifact.summary, /over 10 runs: min [\d.]+ \/ median [\d.]+ \/ max [\d.]+ ms .*ratio [\d.]+ \(slower/);
      assert.ok(artifact.confidence >= 0.75);
      assert.equal(artifact.rollback?.kind, 'snapshot', 'the runs left the workspace as it was');
      const check = benchmarkSkill.outputSchema!.safeParse(artifact.data);
      assert.ok(check.success, check.success ? '' : check.error.message);
    });

    it('a command that writes into the workspace is named, and no rollback is claimed for it', async () => {
      const dir = ws({ 'a.txt': 'flat.js' });
      const { artifact } = await run('benchmark', dir, { command: 'date +%N >> out.log', runs: 2, warmup: 0 });
      assert.equal(artifact.unable, undefined, artifact.summary);
      assert.deepEqual((artifact.data as BenchData & { workspaceChanged: string[] }).workspaceChanged, ['out.log']);
      assert.equal(artifact.rollback, undefined);
    });

    it('a failing command is needs input naming the run and the output; without run_command nothing runs', async () => {
      const dir = ws();
      const failing = await run('benchmark', dir, { command: 'echo broken >&2; exit 3', runs: 3 });
      assert.deepEqual(failing.artifact.needsInput, { field: 'command' });
      assert.match(failing.artifact.unable!, /exited 3 on the warm-up: broken$/);
      const marker = path.join(dir, 'ran');
      const denied = await run('benchmark', dir, { command: ['touch', marker] }, (k) => k !== 'run_command');
      assert.match(denied.artifact.unable!, /did not allow run_command/);
      assert.throws(() => readFileSync(marker), /ENOENT/);
    });
  });
});
