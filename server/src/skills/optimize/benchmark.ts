/**
 * optimize-ai `benchmark`: a command run N times through the test runner's `runCommand` (its own
 * process group, bounded output, killed on timeout or abort), timed with the monotonic clock around
 * each run, and compared with a baseline command run interleaved in the same session: the order
 * alternates (command, baseline, baseline, command, ...) so drift of the machine (a warming cache, a
 * neighbour's load) falls on both alike. The comparison is the ratio of medians and a Mann-Whitney U
 * test (normal approximation) that says whether the difference is more than noise.
 */
import type { RunResult } from '../testing/runner';

export interface CommandSpec {
  /** argv when given as an array; `sh -c` of the string otherwise. */
  argv: string[];
  shell: boolean;
  display: string;
}

export interface BenchInput {
  command: CommandSpec;
  baseline: CommandSpec | null;
  runs: number;
  warmup: number;
  timeoutMs: number;
}

export type BenchInputResult = { ok: true; input: BenchInput } | { ok: false; field: string; message: string };

export const DEFAULT_RUNS = 10;
export const MAX_RUNS = 200;
export const DEFAULT_TIMEOUT_MS = 60_000;

function commandOf(raw: unknown, field: string): CommandSpec | { error: string } | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw === 'string') {
    const s = raw.trim();
    if (!s) return null;
    if (s.length > 4000) return { error: `input.${field} is longer than 4000 characters` };
    return { argv: [s], shell: true, display: s };
  }
  if (Array.isArray(raw) && raw.length && raw.every((a) => typeof a === 'string') && (raw[0] as string).length) {
    const argv = raw as string[];
    return { argv, shell: false, display: argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ') };
  }
  return { error: `input.${field} must be a command line (string) or an argv array of strings` };
}

function intOf(raw: unknown, field: string, def: number, min: number, max: number): number | string {
  if (raw === undefined || raw === null || raw === '') return def;
  const n = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) return `input.${field} must be an integer from ${min} to ${max}`;
  return n;
}

/** Reads command, baseline, runs (default 10), warmup (default 1) and timeoutMs (per run, default 60 s). */
export function parseBenchInput(input: Record<string, unknown>): BenchInputResult {
  const command = commandOf(input['command'], 'command');
  if (!command) return { ok: false, field: 'command', message: 'no command to benchmark: give input.command (a command line or an argv array)' };
  if ('error' in command) return { ok: false, field: 'command', message: command.error };
  const baseline = commandOf(input['baseline'], 'baseline');
  if (baseline && 'error' in baseline) return { ok: false, field: 'baseline', message: baseline.error };
  const runs = intOf(input['runs'], 'runs', DEFAULT_RUNS, 2, MAX_RUNS);
  if (typeof runs === 'string') return { ok: false, field: 'runs', message: runs };
  const warmup = intOf(input['warmup'], 'warmup', 1, 0, 20);
  if (typeof warmup === 'string') return { ok: false, field: 'warmup', message: warmup };
  const timeoutMs = intOf(input['timeoutMs'], 'timeoutMs', DEFAULT_TIMEOUT_MS, 100, 600_000);
  if (typeof timeoutMs === 'string') return { ok: false, field: 'timeoutMs', message: timeoutMs };
  return { ok: true, input: { command, baseline, runs, warmup, timeoutMs } };
}

export interface Stats { runs: number; minMs: number; medianMs: number; maxMs: number; meanMs: number; stddevMs: number }

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** min / median / max / mean and the sample standard deviation (n - 1). */
export function stats(xs: readonly number[]): Stats {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1) : 0;
  return { runs: n, minMs: r3(Math.min(...xs)), medianMs: r3(median(xs)), maxMs: r3(Math.max(...xs)), meanMs: r3(mean), stddevMs: r3(Math.sqrt(variance)) };
}

/** Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected ranks). */
export function mannWhitneyP(a: readonly number[], b: readonly number[]): number {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) => x.v - y.v);
  const ranks = new Array<number>(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    for (let k = i; k <= j; k++) ranks[k] = (i + j) / 2 + 1;
    i = j + 1;
  }
  const n1 = a.length; const n2 = b.length; const n = n1 + n2;
  const r1 = all.reduce((s, x, i) => s + (x.g === 0 ? ranks[i]! : 0), 0);
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const mu = (n1 * n2) / 2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  if (!sigma) return 1;
  const z = (Math.abs(u - mu) - 0.5) / sigma;
  return Math.min(1, 2 * (1 - normalCdf(Math.max(0, z))));
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26, error < 1.5e-7). */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.3275911 * (z / Math.SQRT2));
  const erf = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-(z * z) / 2);
  return 0.5 * (1 + erf);
}

export interface Comparison {
  /** median(command) / median(baseline): below 1 the command is faster. */
  ratio: number;
  /** Mann-Whitney U, two-sided. */
  pValue: number;
  verdict: 'faster' | 'slower' | 'no significant difference';
}

export function compare(command: readonly number[], baseline: readonly number[]): Comparison {
  const ratio = Math.round((median(command) / median(baseline)) * 1000) / 1000;
  const pValue = Math.round(mannWhitneyP(command, baseline) * 10000) / 10000;
  const verdict = pValue < 0.05 ? (ratio < 1 ? 'faster' : 'slower') : 'no significant difference';
  return { ratio, pValue, verdict };
}

export interface RunFailure { which: 'command' | 'baseline'; run: number; exitCode: number | null; reason: string; stderrTail: string }

export interface BenchData {
  command: string;
  baseline: string | null;
  runs: number;
  warmup: number;
  order: string;
  commandStats: Stats;
  baselineStats: Stats | null;
  comparison: Comparison | null;
  samplesMs: { command: number[]; baseline: number[] };
}

export type Runner = (spec: CommandSpec) => Promise<{ ms: number; result: RunResult }>;

/**
 * Runs the warm-ups (not timed into the result), then `runs` pairs in ABBA order. Stops at the first
 * failing run (non-zero exit, timeout, start failure): the timings of a failing command mean nothing.
 */
export async function benchmark(b: BenchInput, run: Runner, signal?: AbortSignal): Promise<{ ok: true; data: BenchData } | { ok: false; failure: RunFailure }> {
  const times = { command: [] as number[], baseline: [] as number[] };
  const once = async (which: 'command' | 'baseline', n: number, timed: boolean): Promise<RunFailure | null> => {
    const spec = which === 'command' ? b.command : b.baseline!;
    const { ms, result } = await run(spec);
    const bad = result.spawnError ? `could not start: ${result.spawnError}` : result.timedOut ? `timed out after ${b.timeoutMs} ms` : result.aborted ? 'cancelled' : result.exitCode !== 0 ? `exited ${result.exitCode ?? result.signal}` : null;
    if (bad) return { which, run: n, exitCode: result.exitCode, reason: bad, stderrTail: (result.stderr || result.stdout).trim().split('\n').slice(-3).join('\n').slice(-400) };
    if (timed) times[which].push(ms);
    return null;
  };
  const seq = (i: number): Array<'command' | 'baseline'> => (!b.baseline ? ['command'] : i % 2 ? ['baseline', 'command'] : ['command', 'baseline']);
  for (let i = 0; i < b.warmup; i++) for (const w of seq(i)) { const f = await once(w, 0, false); if (f) return { ok: false, failure: f }; }
  for (let i = 0; i < b.runs; i++) {
    for (const w of seq(i)) {
      if (signal?.aborted) return { ok: false, failure: { which: w, run: i + 1, exitCode: null, reason: 'cancelled', stderrTail: '' } };
      const f = await once(w, i + 1, true);
      if (f) return { ok: false, failure: f };
    }
  }
  const rounded = (xs: number[]) => xs.map(r3);
  return {
    ok: true,
    data: {
      command: b.command.display, baseline: b.baseline?.display ?? null, runs: b.runs, warmup: b.warmup,
      order: b.baseline ? 'interleaved, alternating command/baseline then baseline/command' : 'sequential',
      commandStats: stats(times.command), baselineStats: b.baseline ? stats(times.baseline) : null,
      comparison: b.baseline ? compare(times.command, times.baseline) : null,
      samplesMs: { command: rounded(times.command), baseline: rounded(times.baseline) },
    },
  };
}
