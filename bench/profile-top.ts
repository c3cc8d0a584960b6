/**
 * Where the CPU went in a `.cpuprofile` (from `node --cpu-prof --cpu-prof-dir=<dir> --import tsx bench/...`):
 * self time summed per function (name + file) and per file, the top N printed with their share of the
 * samples. `--callers <function>` prints instead the call paths (3 frames up) that lead to that
 * function, with the time spent in it and below it.
 * Run: node --import tsx bench/profile-top.ts <file.cpuprofile> [--top 40] [--callers <name>]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const short = (url: string): string => url.replace(/^file:\/\//, '').replace(/^.*?\/(server|bench|protocol|node_modules)\//, '$1/');

function main(): void {
  const file = process.argv[2];
  if (!file || file.startsWith('--')) {
    console.error('usage: node --import tsx bench/profile-top.ts <file.cpuprofile> [--top N] [--callers <function>]');
    process.exit(2);
  }
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const d = p.timeDeltas[i] ?? 0;
    total += d;
    self.set(id, (self.get(id) ?? 0) + d);
  });
  const ms = (us: number): string => `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const top = Number(flag('--top') ?? 40);
  const callers = flag('--callers');
  if (callers) {
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const inclusive = (id: number): number => (self.get(id) ?? 0) + (byId.get(id)!.children ?? []).reduce((s, c) => s + inclusive(c), 0);
    const paths = new Map<string, number>();
    for (const n of p.nodes) {
      if (n.callFrame.functionName !== callers) continue;
      const chain: string[] = [];
      let recursive = false;
      for (let a = parent.get(n.id); a !== undefined; a = parent.get(a)) {
        const name = byId.get(a)!.callFrame.functionName || '(anonymous)';
        if (name === callers) recursive = true;
        if (chain.length < 3) chain.push(name);
      }
      if (recursive) continue; // counted at its outermost call
      const key = chain.join(' < ');
      paths.set(key, (paths.get(key) ?? 0) + inclusive(n.id));
    }
    for (const [k, t] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(t)}  ${callers} < ${k}`);
    return;
  }
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, t] of self) {
    const cf = byId.get(id)!.callFrame;
    const url = short(cf.url);
    const k = `${cf.functionName || '(anonymous)'}  ${url}`;
    fns.set(k, (fns.get(k) ?? 0) + t);
    files.set(url || cf.functionName, (files.get(url || cf.functionName) ?? 0) + t);
  }
  console.log(`total ${(total / 1000).toFixed(0)} ms of samples`);
  console.log('--- self time by function');
  for (const [k, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(t)}  ${k}`);
  console.log('--- self time by file');
  for (const [k, t] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${ms(t)}  ${k}`);
}

main();
