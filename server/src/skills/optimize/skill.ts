/**
 * optimize-ai's embedded skills [PRO], deterministic, no model:
 *
 *  - `analyze` (the default action): reads CPU profiles (profile.ts: V8 .cpuprofile, Chrome trace;
 *    prof-process.ts: the `node --prof-process` report),
 *    and reports self and total time per function with its url:line and the call paths of the hottest
 *    stacks. A hot spot (a finding) is a function of the program whose self time is at least
 *    `input.threshold` (default 10%) of the profiled time. Input: `input.profile` (a path or a list);
 *    without it, the *.cpuprofile files of the workspace. None: not applicable, with where it looked.
 *  - `benchmark`: runs `input.command` N times (benchmark.ts) through runCommand, only when ACMF
 *    allowed `run_command`, and compares it with `input.baseline` run interleaved in the same session.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Artifact, Evidence, Skill } from '../../engine/rigor/skill';
import type { ProposedAction } from '../../engine/acmf/records';
import { runCommand } from '../testing/runner';
import { walkFiles, WorkspaceFiles } from '../workspace/files';
import { benchmark, parseBenchInput, type BenchData, type CommandSpec } from './benchmark';
import { parseProfile, summarize, type FunctionTime, type ProfileSummary } from './profile';
import { isProfProcessReport, parseProfProcess } from './prof-process';
import { analyzeProfileDataSchema, benchmarkDataSchema } from './schemas';
import { optimizeInputSchema } from '../operate-inputs';

export const PROFILE_LOOKED_AT = 'input.profile, *.cpuprofile in the workspace (not node_modules/.git)';
const SKIP = new Set(['node_modules', '.git', 'dist', 'out', '.cadre']);
const MAX_PROFILE_BYTES = 256 * 1024 * 1024;
const MAX_FILES = 20;

export interface HotSpot extends FunctionTime { file: string; severity: 'high' | 'medium' | 'low' }

export interface AnalyzeProfileData {
  threshold: number;
  hotSpots: HotSpot[];
  profiles: Array<{ file: string } & ProfileSummary>;
  examined: { files: number; samples: number; durationMs: number; busyMs: number };
}

type Loaded = { files: Array<{ file: string; summary: ProfileSummary }>; problem?: { message: string; field: string }; looked: string };

const SEVERITY_RANK = { high: 3, medium: 2, low: 1 } as const;
const PSEUDO_FN = new Set(['(idle)', '(program)', '(root)']);

function thresholdOf(raw: unknown): number | string {
  if (raw === undefined || raw === null || raw === '') return 0.1;
  const n = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof n !== 'number' || !(n > 0) || n >= 100) return 'input.threshold must be a share (0.1) or a percent (10) of the profiled time';
  return n >= 1 ? n / 100 : n;
}

/** The profile files named by the input (checked through WorkspaceFiles) or found in the workspace. */
export function loadProfiles(ws: string, input: Record<string, unknown>): Loaded {
  const files = new WorkspaceFiles(ws);
  const raw = input['profile'] ?? input['files'];
  const field = input['profile'] !== undefined ? 'profile' : 'files';
  let named: string[];
  if (raw === undefined || raw === null || raw === '') {
    named = walkFiles(files.root, { skipDirs: SKIP }).filter((f) => f.endsWith('.cpuprofile')).sort().slice(0, MAX_FILES);
  } else if (typeof raw === 'string' || (Array.isArray(raw) && raw.every((x) => typeof x === 'string'))) {
    named = typeof raw === 'string' ? [raw] : raw as string[];
  } else {
    return { files: [], problem: { field, message: `input.${field} must be a path or a list of paths` }, looked: PROFILE_LOOKED_AT };
  }
  const out: Loaded['files'] = [];
  for (const given of named) {
    const r = files.readText(given, MAX_PROFILE_BYTES);
    if (!r.ok) return { files: out, problem: { field, message: `input.${field}: ${given} ${r.reason === 'not found' ? 'does not exist in the workspace' : `is ${r.reason}`}; not read` }, looked: PROFILE_LOOKED_AT };
    if (isProfProcessReport(r.text)) {
      const pp = parseProfProcess(r.text);
      if (!pp.ok) return { files: out, problem: { field, message: `${r.rel || given}${pp.line ? `:${pp.line}` : ''}: ${pp.message}` }, looked: PROFILE_LOOKED_AT };
      out.push({ file: r.rel || given, summary: pp.summary });
      continue;
    }
    const p = parseProfile(r.text);
    if (!p.ok) return { files: out, problem: { field, message: `${r.rel || given}${p.line ? `:${p.line}` : ''}: ${p.message}` }, looked: PROFILE_LOOKED_AT };
    out.push({ file: r.rel || given, summary: summarize(p.profile) });
  }
  return { files: out, looked: PROFILE_LOOKED_AT };
}

export function hotSpotsOf(files: Loaded['files'], threshold: number): HotSpot[] {
  const hot: HotSpot[] = [];
  for (const { file, summary } of files) {
    for (const f of summary.functions) {
      if (PSEUDO_FN.has(f.function) || f.selfShare < threshold) continue;
      hot.push({ ...f, file, severity: f.selfShare >= 0.5 ? 'high' : f.selfShare >= 0.25 ? 'medium' : 'low' });
    }
  }
  return hot.sort((a, b) => b.selfShare - a.selfShare);
}

/** Deterministic over complete input: 0.9 with 100 samples or more of busy time, less with fewer (a short profile may miss a hot spot). */
function profileConfidence(files: Loaded['files']): number {
  const samples = files.reduce((a, f) => a + f.summary.samples, 0);
  return Math.round((0.6 + 0.3 * Math.min(1, samples / 100)) * 100) / 100;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

export function renderProfiles(d: AnalyzeProfileData): string {
  const out = ['# optimize-ai analysis', '', `Examined ${d.examined.files} profile(s): ${d.examined.samples} samples over ${d.examined.durationMs} ms (${d.examined.busyMs} ms busy). Hot spot: self time >= ${pct(d.threshold)} of the profiled time.`, ''];
  if (!d.hotSpots.length) out.push('No hot spot found.', '');
  else out.push('## Hot spots', '', ...d.hotSpots.map((h) => `- ${h.severity}: \`${h.function}\` at ${h.location}: self ${h.selfMs} ms (${pct(h.selfShare)}), total ${h.totalMs} ms (${pct(h.totalShare)}) in ${h.file}`), '');
  for (const p of d.profiles) {
    out.push(`## ${p.file} (${p.format})`, '', '| function | location | self ms | self % | total ms | total % |', '|---|---|---|---|---|---|');
    for (const f of p.functions) out.push(`| \`${f.function}\` | ${f.location} | ${f.selfMs} | ${pct(f.selfShare)} | ${f.totalMs} | ${pct(f.totalShare)} |`);
    out.push('', 'Hottest call paths:', '', ...p.paths.slice(0, 5).map((c) => `- ${c.selfMs} ms (${pct(c.share)}): ${c.frames.join(' > ')}`), '');
    if (p.others.length) out.push(`Not read (other profiles of the trace): ${p.others.join(', ')}.`, '');
  }
  return out.join('\n');
}

function makeAnalyze(): Skill {
  const prepared = new WeakMap<Evidence, Loaded>();
  const kind = 'optimize-analysis';
  return {
    agentId: 'optimize-ai',
    action: 'analyze',
    inputSchema: optimizeInputSchema,
    needs: ['workspace'],
    outputSchema: analyzeProfileDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to read profiles from'); return evidence; }
      const d = loadProfiles(ws, ctx.request.input);
      prepared.set(evidence, d);
      for (const f of d.files) evidence.items.push({ source: f.file, detail: `${f.summary.format}: ${f.summary.samples} samples, ${f.summary.durationMs} ms`, weight: 0.8 });
      evidence.pathsRead.push(...d.files.map((f) => f.file));
      if (d.problem) evidence.constraints.push(d.problem.message);
      ctx.progress(40, d.files.length ? 0.6 : 0.3);
      return evidence;
    },
    propose(_ctx, evidence): ProposedAction[] {
      const d = prepared.get(evidence);
      return d?.files.length ? [{ kind: 'read', description: 'read the CPU profiles', paths: d.files.map((f) => f.file) }, { kind: 'analyze', description: 'sum self and total time per function' }] : [];
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `optimize-ai analyze: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to read profiles from');
      const threshold = thresholdOf(ctx.request.input['threshold']);
      if (typeof threshold === 'string') return unable(threshold, 'threshold');
      const d = prepared.get(evidence) ?? loadProfiles(ws, ctx.request.input);
      if (d.problem) return unable(d.problem.message, d.problem.field);
      if (!d.files.length) {
        const why = `no CPU profile to analyze: looked for ${d.looked}`;
        return { kind, summary: `optimize-ai analyze: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const hotSpots = hotSpotsOf(d.files, threshold);
      const data: AnalyzeProfileData = {
        threshold, hotSpots, profiles: d.files.map((f) => ({ file: f.file, ...f.summary })),
        examined: {
          files: d.files.length, samples: d.files.reduce((a, f) => a + f.summary.samples, 0),
          durationMs: Math.round(d.files.reduce((a, f) => a + f.summary.durationMs, 0) * 100) / 100,
          busyMs: Math.round(d.files.reduce((a, f) => a + f.summary.busyMs, 0) * 100) / 100,
        },
      };
      const confidence = profileConfidence(d.files);
      ctx.progress(100, confidence);
      const examined = `${data.examined.files} profile(s), ${data.examined.samples} samples over ${data.examined.durationMs} ms (${data.examined.busyMs} ms busy)`;
      const summary = hotSpots.length
        ? `${hotSpots.length} hot spot(s): ${hotSpots.slice(0, 3).map((h) => `${h.function} at ${h.location} self ${pct(h.selfShare)} (${h.selfMs} ms), total ${pct(h.totalShare)}`).join('; ')} (examined ${examined})`
        : `nothing found: no function of the program has ${pct(threshold)} or more of the profiled time; examined ${examined}`;
      return {
        kind, summary, goalRef, confidence, data, text: renderProfiles(data), tokens: 0,
        findingsAfter: { count: hotSpots.length, maxSeverity: hotSpots.reduce((m, h) => Math.max(m, SEVERITY_RANK[h.severity]), 0) },
      };
    },
  };
}

export function renderBench(d: BenchData): string {
  const row = (name: string, s: BenchData['commandStats']) => `| ${name} | ${s.runs} | ${s.minMs} | ${s.medianMs} | ${s.maxMs} | ${s.meanMs} | ${s.stddevMs} |`;
  const out = ['# optimize-ai benchmark', '', `${d.runs} timed run(s) after ${d.warmup} warm-up(s), ${d.order}.`, '', '| command | runs | min ms | median ms | max ms | mean ms | stddev ms |', '|---|---|---|---|---|---|---|', row(`\`${d.command}\``, d.commandStats)];
  if (d.baselineStats) out.push(row(`baseline \`${d.baseline}\``, d.baselineStats));
  if (d.comparison) out.push('', `Ratio of medians (command / baseline): ${d.comparison.ratio}; Mann-Whitney U p = ${d.comparison.pValue}: ${d.comparison.verdict}.`);
  return out.join('\n');
}

/** Wall time of one run through runCommand, from the monotonic clock (spawn included, the same for command and baseline). */
function runnerIn(cwd: string, timeoutMs: number, signal: AbortSignal) {
  return async (spec: CommandSpec) => {
    const t0 = performance.now();
    const result = await runCommand(spec.shell ? ['sh', '-c', spec.argv[0]!] : spec.argv, { cwd, timeoutMs, signal, maxBytes: 64 * 1024 });
    return { ms: performance.now() - t0, result };
  };
}

/**
 * The workspace's files as names, sizes and modification times (not contents: a benchmarked command
 * may be run over a large tree): equal before and after the runs proves the command changed nothing
 * to roll back, which the Review's rollback gate accepts as a snapshot.
 */
export function treeStamp(root: string): { digest: string; files: Map<string, string> } {
  const files = new Map<string, string>();
  for (const rel of walkFiles(root, { skipDirs: new Set(['node_modules', '.git']), limit: 20_000 })) {
    try { const st = statSync(path.join(root, rel)); files.set(rel, `${st.size}:${st.mtimeMs}`); } catch { files.set(rel, 'gone'); }
  }
  const digest = createHash('sha256').update([...files].sort(([x], [y]) => x.localeCompare(y)).map(([f, v]) => `${f}\0${v}`).join('\n')).digest('hex');
  return { digest, files };
}

function changedBetween(a: Map<string, string>, b: Map<string, string>): string[] {
  const out = new Set<string>();
  for (const [f, v] of a) if (b.get(f) !== v) out.add(f);
  for (const f of b.keys()) if (!a.has(f)) out.add(f);
  return [...out].sort();
}

function benchConfidence(d: BenchData): number {
  const cv = (s: BenchData['commandStats']) => (s.meanMs ? s.stddevMs / s.meanMs : 0);
  const noisy = Math.max(cv(d.commandStats), d.baselineStats ? cv(d.baselineStats) : 0) > 0.25;
  return Math.round((0.6 + 0.3 * Math.min(1, d.runs / 10)) * (noisy ? 0.9 : 1) * 100) / 100;
}

function makeBenchmark(): Skill {
  const kind = 'optimize-benchmark';
  return {
    agentId: 'optimize-ai',
    action: 'benchmark',
    inputSchema: optimizeInputSchema,
    needs: ['workspace'],
    outputSchema: benchmarkDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const b = parseBenchInput(ctx.request.input);
      if (!b.ok) evidence.constraints.push(b.message);
      else evidence.items.push({ source: 'input.command', detail: `${b.input.command.display}${b.input.baseline ? ` vs ${b.input.baseline.display}` : ''}, ${b.input.runs} run(s)`, weight: 0.7 });
      return evidence;
    },
    propose(ctx): ProposedAction[] {
      const b = parseBenchInput(ctx.request.input);
      if (!b.ok) return [];
      const n = b.input.runs + b.input.warmup;
      return [{ kind: 'run_command', description: `run \`${b.input.command.display}\` ${n} time(s)${b.input.baseline ? ` and the baseline \`${b.input.baseline.display}\` ${n} time(s), interleaved` : ''}` }];
    },
    async generate(ctx): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `optimize-ai benchmark: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to run the command in');
      const b = parseBenchInput(ctx.request.input);
      if (!b.ok) return unable(b.message, b.field);
      if (!ctx.allowed('run_command')) return unable('ACMF did not allow run_command: the command was not run');
      const root = new WorkspaceFiles(ws).root;
      const before = treeStamp(root);
      const r = await benchmark(b.input, runnerIn(root, b.input.timeoutMs, ctx.signal), ctx.signal);
      const after = treeStamp(root);
      const changed = changedBetween(before.files, after.files);
      if (!r.ok) {
        const f = r.failure;
        return unable(`input.${f.which}: \`${f.which === 'command' ? b.input.command.display : b.input.baseline!.display}\` ${f.reason} on ${f.run ? `run ${f.run}` : 'the warm-up'}${f.stderrTail ? `: ${f.stderrTail}` : ''}`, f.which);
      }
      const d: BenchData & { workspaceChanged: string[] } = { ...r.data, workspaceChanged: changed.slice(0, 50) };
      const confidence = benchConfidence(d);
      ctx.progress(100, confidence);
      const s = d.commandStats;
      const cmp = d.comparison ? `; baseline median ${d.baselineStats!.medianMs} ms, ratio ${d.comparison.ratio} (${d.comparison.verdict}, p=${d.comparison.pValue})` : '';
      const slower = d.comparison?.verdict === 'slower';
      return {
        kind, goalRef, confidence, data: d, text: renderBench(d), tokens: 0,
        summary: `\`${d.command}\` over ${d.runs} runs: min ${s.minMs} / median ${s.medianMs} / max ${s.maxMs} ms (stddev ${s.stddevMs})${cmp}`,
        actionsTaken: [{ kind: 'run_command', description: `ran \`${d.command}\` ${d.runs + d.warmup} time(s)${d.baseline ? ` and \`${d.baseline}\` as often` : ''}` }],
        findingsAfter: { count: slower ? 1 : 0, maxSeverity: slower ? 2 : 0 },
        // Unchanged files: nothing to roll back (a snapshot of the tree as it still is). Changed ones: no rollback is claimed, the gate says so.
        ...(changed.length ? {} : { rollback: { kind: 'snapshot' as const, ref: `tree:${before.digest.slice(0, 16)} (${before.files.size} files, unchanged by the runs)` } }),
      };
    },
  };
}

export const analyzeSkill: Skill = makeAnalyze();
export const benchmarkSkill: Skill = makeBenchmark();
