/**
 * CPU profiles as V8 and Chrome write them, read into one shape and summed per function.
 *
 *  - V8 `.cpuprofile` (`node --cpu-prof`, DevTools "Save profile", the inspector's Profiler.stop):
 *    `{nodes: [{id, callFrame, children?, hitCount?}], startTime, endTime, samples: [nodeId], timeDeltas: [µs]}`.
 *  - Chrome trace JSON (DevTools Performance "Save profile", `chrome://tracing`, Puppeteer's
 *    tracing): an array of trace events or `{traceEvents}`; the JavaScript samples are in `Profile` and
 *    `ProfileChunk` events whose `args.data.cpuProfile` has nodes (with `parent` instead of `children`)
 *    and samples, and `args.data.timeDeltas`. The chunks of one profile id are joined; a trace with
 *    several profiles (threads) is read for the one with the most samples, the others are named.
 *  - `--prof` logs (isolate-*.log) are not read (their ticks need the binary's symbols): named as such.
 *    Their `--prof-process` report is read by prof-process.ts.
 *
 * Time of a sample: the delta to the next sample (the last one runs to `endTime`), as DevTools and
 * speedscope attribute it. Self time of a function: its samples on top of the stack; total time: the
 * samples with the function anywhere on the stack (a recursive function counted once per sample).
 */
import { parseDocument } from 'yaml';

export interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
export interface ProfileNode { id: number; callFrame: CallFrame; parent?: number }
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** Microseconds each sample lasted (same length as samples). */
  weights: number[];
  format: 'cpuprofile' | 'chrome-trace';
  /** Other profiles of a trace, not read (names only). */
  others: string[];
}

export type ProfileParse = { ok: true; profile: CpuProfile } | { ok: false; message: string; line?: number };

/** Pseudo-frames V8 adds: not functions of the program. `(garbage collector)` is kept: GC pressure is a finding. */
const PSEUDO = new Set(['(root)', '(idle)', '(program)']);

function frameOf(raw: unknown): CallFrame | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const f = raw as Record<string, unknown>;
  return {
    functionName: typeof f['functionName'] === 'string' ? f['functionName'] : '',
    url: typeof f['url'] === 'string' ? f['url'] : '',
    lineNumber: typeof f['lineNumber'] === 'number' ? f['lineNumber'] : -1,
    columnNumber: typeof f['columnNumber'] === 'number' ? f['columnNumber'] : -1,
  };
}

/** Nodes with `parent` links, from either `children` arrays (cpuprofile) or `parent` fields (trace chunks). */
function readNodes(raw: unknown[], where: string): ProfileNode[] | string {
  const nodes: ProfileNode[] = [];
  const parentOf = new Map<number, number>();
  for (const [i, n] of raw.entries()) {
    if (!n || typeof n !== 'object') return `${where}: nodes[${i}] is not an object`;
    const o = n as Record<string, unknown>;
    const frame = frameOf(o['callFrame']);
    if (typeof o['id'] !== 'number' || !frame) return `${where}: nodes[${i}] has no numeric id or no callFrame`;
    nodes.push({ id: o['id'], callFrame: frame, ...(typeof o['parent'] === 'number' ? { parent: o['parent'] } : {}) });
    if (Array.isArray(o['children'])) for (const c of o['children']) if (typeof c === 'number') parentOf.set(c, o['id']);
  }
  for (const n of nodes) if (n.parent === undefined && parentOf.has(n.id)) n.parent = parentOf.get(n.id)!;
  return nodes;
}

/** Sample weights from the deltas: sample i lasts until sample i+1; the last until endTime (or the mean delta). */
function weightsOf(deltas: number[], startTime: number | undefined, endTime: number | undefined): number[] {
  const n = deltas.length;
  const ts: number[] = [];
  let t = startTime ?? 0;
  for (const d of deltas) { t += Math.max(0, d); ts.push(t); }
  const w: number[] = [];
  for (let i = 0; i + 1 < n; i++) w.push(ts[i + 1]! - ts[i]!);
  if (n) {
    const mean = n > 1 ? (ts[n - 1]! - ts[0]!) / (n - 1) : 0;
    const tail = endTime !== undefined && endTime >= ts[n - 1]! ? endTime - ts[n - 1]! : mean;
    // A last sample that would run for more than 10 mean intervals is the profiler idling to a stop: cap it.
    w.push(mean > 0 ? Math.min(tail, 10 * mean) : tail);
  }
  return w;
}

function fromCpuProfile(o: Record<string, unknown>): ProfileParse {
  if (!Array.isArray(o['nodes']) || !Array.isArray(o['samples'])) return { ok: false, message: 'not a V8 CPU profile: no nodes and samples arrays' };
  const nodes = readNodes(o['nodes'], 'cpuprofile');
  if (typeof nodes === 'string') return { ok: false, message: nodes };
  const samples = o['samples'].filter((s): s is number => typeof s === 'number');
  const deltas = Array.isArray(o['timeDeltas']) ? o['timeDeltas'].map((d) => (typeof d === 'number' ? d : 0)) : [];
  if (deltas.length !== samples.length) return { ok: false, message: `timeDeltas has ${deltas.length} entries for ${samples.length} samples` };
  const num = (k: string) => (typeof o[k] === 'number' ? (o[k] as number) : undefined);
  return { ok: true, profile: { nodes, samples, weights: weightsOf(deltas, num('startTime'), num('endTime')), format: 'cpuprofile', others: [] } };
}

interface TraceProfile { key: string; nodes: unknown[]; samples: number[]; deltas: number[]; startTime?: number; endTime?: number }

function fromTrace(events: unknown[]): ProfileParse {
  const byId = new Map<string, TraceProfile>();
  for (const ev of events) {
    if (!ev || typeof ev !== 'object') continue;
    const e = ev as Record<string, unknown>;
    if (e['name'] !== 'Profile' && e['name'] !== 'ProfileChunk') continue;
    const key = `${String(e['pid'] ?? '?')}:${String(e['id'] ?? e['tid'] ?? '?')}`;
    const p = byId.get(key) ?? { key, nodes: [], samples: [], deltas: [] };
    byId.set(key, p);
    const data = ((e['args'] as Record<string, unknown> | undefined)?.['data'] ?? {}) as Record<string, unknown>;
    if (typeof data['startTime'] === 'number') p.startTime = data['startTime'];
    if (typeof data['endTime'] === 'number') p.endTime = data['endTime'];
    const cpu = (data['cpuProfile'] ?? {}) as Record<string, unknown>;
    if (Array.isArray(cpu['nodes'])) p.nodes.push(...cpu['nodes']);
    if (Array.isArray(cpu['samples'])) p.samples.push(...cpu['samples'].filter((s): s is number => typeof s === 'number'));
    if (Array.isArray(data['timeDeltas'])) p.deltas.push(...data['timeDeltas'].map((d) => (typeof d === 'number' ? d : 0)));
  }
  const profiles = [...byId.values()].filter((p) => p.samples.length).sort((a, b) => b.samples.length - a.samples.length);
  if (!profiles.length) return { ok: false, message: 'a Chrome trace without JavaScript samples (no ProfileChunk events): record it with the JavaScript samples (the "Disable JavaScript samples" box unchecked)' };
  const best = profiles[0]!;
  const nodes = readNodes(best.nodes, `trace profile ${best.key}`);
  if (typeof nodes === 'string') return { ok: false, message: nodes };
  if (best.deltas.length !== best.samples.length) return { ok: false, message: `trace profile ${best.key}: ${best.deltas.length} timeDeltas for ${best.samples.length} samples` };
  return {
    ok: true,
    profile: { nodes, samples: best.samples, weights: weightsOf(best.deltas, best.startTime, best.endTime), format: 'chrome-trace', others: profiles.slice(1).map((p) => `profile ${p.key} (${p.samples.length} samples)`) },
  };
}

/**
 * Line of a JSON.parse error: V8 names a position only for some errors, so the YAML parser (JSON is
 * YAML 1.2 flow syntax) is asked where it stops, on the error path only.
 */
function jsonErrorLine(text: string, e: unknown): number | undefined {
  const pos = /position (\d+)/.exec((e as Error).message);
  if (pos) return text.slice(0, Number(pos[1])).split('\n').length;
  const doc = parseDocument(text, { prettyErrors: true });
  return doc.errors[0]?.linePos?.[0]?.line;
}

/** Parses a profile file's text: a V8 .cpuprofile or a Chrome trace; anything else says what it is. */
export function parseProfile(text: string): ProfileParse {
  const head = text.trimStart().slice(0, 200);
  if (/^(v8-version|shared-library|code-creation|tick),/m.test(head)) return { ok: false, message: 'a raw --prof log (isolate-*.log) is not read (its ticks need the binary\'s symbols): give its `node --prof-process` report, or record with `node --cpu-prof`', line: 1 };
  if (/^Statistical profiling result/m.test(head)) return { ok: false, message: 'a --prof-process report, not a CPU profile: read it with parseProfProcess (prof-process.ts)', line: 1 };
  let doc: unknown;
  try { doc = JSON.parse(text); } catch (e) {
    const line = jsonErrorLine(text, e);
    return { ok: false, message: 'not JSON: neither a .cpuprofile nor a Chrome trace', ...(line ? { line } : {}) };
  }
  if (Array.isArray(doc)) return fromTrace(doc);
  if (doc && typeof doc === 'object') {
    const o = doc as Record<string, unknown>;
    if (Array.isArray(o['traceEvents'])) return fromTrace(o['traceEvents']);
    if ('nodes' in o || 'samples' in o) return fromCpuProfile(o);
  }
  return { ok: false, message: 'JSON that is neither a V8 CPU profile (nodes, samples, timeDeltas) nor a Chrome trace (traceEvents)' };
}

export interface FunctionTime {
  function: string;
  /** `url:line` (1-based line), or the pseudo-frame's name. */
  location: string;
  url: string;
  line: number;
  selfMs: number;
  totalMs: number;
  selfShare: number;
  totalShare: number;
  samples: number;
}

export interface CallPath {
  /** Outermost first, each `name (url:line)`. */
  frames: string[];
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  format: CpuProfile['format'] | 'prof-process';
  samples: number;
  durationMs: number;
  /** Time outside `(idle)`: what the program spent running. */
  busyMs: number;
  functions: FunctionTime[];
  paths: CallPath[];
  others: string[];
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function nameOf(f: CallFrame): string {
  return f.functionName || '(anonymous)';
}

function locationOf(f: CallFrame): string {
  if (!f.url) return f.functionName || '(native)';
  return `${f.url}:${f.lineNumber + 1}`;
}

/** Self and total time per function, and the call paths of the hottest stacks; `top` bounds both lists. */
export function summarize(p: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const keyOf = (f: CallFrame) => `${f.functionName}\0${f.url}\0${f.lineNumber}\0${f.columnNumber}`;
  const fns = new Map<string, FunctionTime>();
  const fnOf = (f: CallFrame): FunctionTime => {
    const k = keyOf(f);
    let t = fns.get(k);
    if (!t) { t = { function: nameOf(f), location: locationOf(f), url: f.url, line: f.lineNumber + 1, selfMs: 0, totalMs: 0, selfShare: 0, totalShare: 0, samples: 0 }; fns.set(k, t); }
    return t;
  };
  // The distinct functions on each node's stack, computed once per node.
  const stackFns = new Map<number, FunctionTime[]>();
  const stackOf = (id: number): FunctionTime[] => {
    const hit = stackFns.get(id);
    if (hit) return hit;
    const seen = new Set<FunctionTime>();
    for (let n = byId.get(id), guard = 0; n && guard < 10_000; n = n.parent !== undefined ? byId.get(n.parent) : undefined, guard++) {
      if (!PSEUDO.has(n.callFrame.functionName) || n.id === id) seen.add(fnOf(n.callFrame));
    }
    const list = [...seen];
    stackFns.set(id, list);
    return list;
  };
  const nodeSelf = new Map<number, number>();
  let duration = 0; let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!; const w = p.weights[i] ?? 0;
    const node = byId.get(id);
    if (!node) continue;
    duration += w;
    if (node.callFrame.functionName === '(idle)') idle += w;
    nodeSelf.set(id, (nodeSelf.get(id) ?? 0) + w);
    const self = fnOf(node.callFrame);
    self.selfMs += w; self.samples++;
    for (const f of stackOf(id)) f.totalMs += w;
  }
  const ms = (us: number) => round(us / 1000);
  const share = (us: number) => (duration ? round(us / duration, 4) : 0);
  const functions = [...fns.values()].filter((f) => f.selfMs > 0 || (f.totalMs > 0 && !PSEUDO.has(f.function)))
    .map((f) => ({ ...f, selfShare: share(f.selfMs), totalShare: share(f.totalMs), selfMs: ms(f.selfMs), totalMs: ms(f.totalMs) }))
    .sort((a, b) => b.selfMs - a.selfMs || b.totalMs - a.totalMs).slice(0, top);
  const paths: CallPath[] = [...nodeSelf].filter(([id]) => !PSEUDO.has(byId.get(id)!.callFrame.functionName))
    .sort((a, b) => b[1] - a[1]).slice(0, Math.min(top, 10)).map(([id, w]) => {
      const frames: string[] = [];
      for (let n = byId.get(id), guard = 0; n && guard < 10_000; n = n.parent !== undefined ? byId.get(n.parent) : undefined, guard++) {
        if (!PSEUDO.has(n.callFrame.functionName)) frames.unshift(`${nameOf(n.callFrame)} (${locationOf(n.callFrame)})`);
      }
      return { frames, selfMs: ms(w), share: share(w) };
    });
  return { format: p.format, samples: p.samples.length, durationMs: ms(duration), busyMs: ms(duration - idle), functions, paths, others: p.others };
}
