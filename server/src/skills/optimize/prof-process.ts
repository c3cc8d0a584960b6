/**
 * The text report of `node --prof-process isolate-*.log` (V8's tick processor), read into the same
 * summary as a CPU profile. What the report gives: the total ticks (header), self ticks per function in
 * the [JavaScript], [C++] and [Shared libraries] sections, and the [Bottom up (heavy) profile]: for
 * each heavy function its callers, indented, each line with the ticks that pass through it (callers
 * under 1% are not shown by V8). From it: self time per function, total time where the heavy profile
 * shows the function (a lower bound: hidden callers are missing), and each heavy function's hottest
 * call path (the first, heaviest caller at each level). Ticks become milliseconds at V8's default
 * `--prof` sampling interval, 1 ms (`--prof-sampling-interval` changes it; the shares do not depend on it).
 */
import type { CallPath, FunctionTime, ProfileSummary } from './profile';

export const PROF_TICK_MS = 1;

export function isProfProcessReport(text: string): boolean {
  return /^\s*Statistical profiling result from /.test(text.slice(0, 400));
}

interface Named { function: string; url: string; line: number; location: string }

/** `JS: *slowHash /app/hot.js:4:18`, `LazyCompile: ~main file:///app/x.js:17:14`, a C++ symbol, a library path. */
export function nameOf(raw: string, section: string): Named {
  const s = raw.trim().replace(/^(?:JS|LazyCompile|Function|Builtin|RegExp|Script|Code|Eval|Handler|Stub|BytecodeHandler|Bytecode):\s*/, '').replace(/^[*~^+-]/, '');
  const m = /^(.*?)\s*(\S+):(\d+):(\d+)$/.exec(s);
  if (m && section !== 'C++' && section !== 'Shared libraries') {
    const fn = m[1]!.trim() || '(anonymous)';
    return { function: fn === '<anonymous>' ? '(anonymous)' : fn, url: m[2]!, line: Number(m[3]), location: `${m[2]}:${m[3]}` };
  }
  return { function: s, url: '', line: 0, location: s };
}

export type ProfProcessParse = { ok: true; summary: ProfileSummary } | { ok: false; message: string; line?: number };

export function parseProfProcess(text: string, top = 15): ProfProcessParse {
  const lines = text.split('\n');
  const head = /\((\d+) ticks/.exec(lines[0] ?? '');
  if (!head) return { ok: false, message: 'a --prof-process report without its "(N ticks, ...)" header', line: 1 };
  const total = Number(head[1]);
  if (!total) return { ok: false, message: 'a --prof-process report with 0 ticks', line: 1 };
  const self = new Map<string, Named & { ticks: number }>();
  const totals = new Map<string, number>();
  const names = new Map<string, Named>();
  const paths: CallPath[] = [];
  let section = '';
  let tree: Array<{ depth: number; name: Named; ticks: number }> = [];
  const flush = () => {
    if (!tree.length) return;
    const leaf = tree[0]!;
    // The total of a function: ticks through it in this heavy tree, once per tree (recursion).
    const seen = new Set<string>();
    for (const n of tree) {
      if (seen.has(n.name.location)) continue;
      seen.add(n.name.location);
      names.set(n.name.location, n.name);
      totals.set(n.name.location, (totals.get(n.name.location) ?? 0) + (n === leaf ? leaf.ticks : n.ticks));
    }
    if (leaf.name.function !== 'UNKNOWN') {
      const chain = [leaf];
      for (let i = 1, want = 1; i < tree.length; i++) if (tree[i]!.depth === want) { chain.push(tree[i]!); want++; } else if (tree[i]!.depth < want) break;
      paths.push({ frames: chain.reverse().map((c) => `${c.name.function} (${c.name.location})`), selfMs: leaf.ticks * PROF_TICK_MS, share: Math.round((leaf.ticks / total) * 10000) / 10000 });
    }
    tree = [];
  };
  for (const [i, raw] of lines.entries()) {
    const sec = /^\s*\[(.+)\]:\s*$/.exec(raw);
    if (sec) { flush(); section = sec[1]!; continue; }
    if (section === 'JavaScript' || section === 'C++' || section === 'Shared libraries') {
      const m = /^\s*(\d+)\s+[\d.]+%\s+(?:[\d.]+%\s+)?(\S.*)$/.exec(raw);
      if (!m) continue;
      const n = nameOf(m[2]!, section);
      const had = self.get(n.location);
      self.set(n.location, { ...n, ticks: (had?.ticks ?? 0) + Number(m[1]) });
    } else if (section === 'Bottom up (heavy) profile') {
      const m = /^\s*(\d+)\s+[\d.]+%( +)(\S.*)$/.exec(raw);
      if (!m) continue;
      const depth = Math.max(0, (m[2]!.length - 2) >> 1);
      if (depth === 0) flush();
      if (depth > 0 && !tree.length) return { ok: false, message: 'the heavy profile has a caller line before its function', line: i + 1 };
      tree.push({ depth, name: nameOf(m[3]!, ''), ticks: Number(m[1]) });
    }
  }
  flush();
  const share = (t: number) => Math.round((t / total) * 10000) / 10000;
  // Functions with no self tick that the heavy profile shows as callers (main, hashAll): total time only.
  for (const [loc, n] of names) if (!self.has(loc) && n.function !== 'UNKNOWN') self.set(loc, { ...n, ticks: 0 });
  const functions: FunctionTime[] = [...self.values()].map((f) => {
    const t = Math.max(totals.get(f.location) ?? 0, f.ticks);
    return { function: f.function, location: f.location, url: f.url, line: f.line, selfMs: f.ticks * PROF_TICK_MS, totalMs: t * PROF_TICK_MS, selfShare: share(f.ticks), totalShare: share(t), samples: f.ticks };
  }).sort((a, b) => b.selfMs - a.selfMs || b.totalMs - a.totalMs).slice(0, top);
  return {
    ok: true,
    summary: {
      format: 'prof-process', samples: total, durationMs: total * PROF_TICK_MS, busyMs: total * PROF_TICK_MS, functions,
      paths: paths.sort((a, b) => b.selfMs - a.selfMs).slice(0, 10), others: [],
    },
  };
}
