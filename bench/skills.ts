/**
 * Secret-scan speed over a generated ~50 MB tree: Cadre's scanner (one combined pass per file), a
 * naive per-rule scan (each rule's regex run separately over each file) and ripgrep with the same
 * patterns, in the same run. Run: node --import tsx bench/skills.ts [megabytes]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SECRET_RULE_DEFS } from '../server/src/skills/security/rules';
import { listFiles, scanText, scanTree } from '../server/src/skills/security/scanner';
import { rng } from '../test/support/prng';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const WORDS = ['const', 'let', 'value', 'return', 'function', 'await', 'config', 'request', 'response', 'user', 'items', 'index',
  'handler', 'result', 'options', 'map', 'filter', 'error', 'data', 'length', 'push', 'then', 'catch', 'state', 'props', 'render',
  'count', 'next', 'prev', 'node', 'parent', 'child', 'list', 'entry', 'buffer', 'stream', 'path', 'file', 'name', 'type', 'id',
  'keyboard', 'tokens', 'monkey', 'cacheKey', 'sessionToken', 'passage'];

/** Writes `megabytes` of source-like text in files of ~64 KiB, with a planted secret every ~200 KiB. */
export function generateTree(dir: string, megabytes: number, seed = 42): { files: number; bytes: number; planted: number } {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)]!;
  const rand = (n: number, alphabet = ALNUM) => Array.from({ length: n }, () => alphabet[Math.floor(r() * alphabet.length)]).join('');
  const target = megabytes * 1024 * 1024;
  let bytes = 0;
  let files = 0;
  let planted = 0;
  while (bytes < target) {
    const sub = path.join(dir, `pkg${files % 40}`, `mod${files % 7}`);
    mkdirSync(sub, { recursive: true });
    const lines: string[] = [];
    let size = 0;
    while (size < 64 * 1024) {
      const k = r();
      let line: string;
      if (k < 0.004) {
        planted++;
        line = pick([
          () => `const awsKey = "AKIA${rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}";`,
          () => `const gh = "ghp_${rand(36)}";`,
          () => `slack: "xoxb-${rand(11, '0123456789')}-${rand(24)}"`,
          () => `const apiToken = "${rand(32)}";`,
          () => `stripe = "sk_live_${rand(28)}"`,
        ])();
      } else if (k < 0.05) {
        line = `  const ${pick(WORDS)}Key = options.${pick(WORDS)} ?? "${pick(WORDS)}";`;
      } else if (k < 0.08) {
        line = `  "integrity": "sha512-${rand(86, `${ALNUM}+/`)}==",`;
      } else if (k < 0.1) {
        line = `  // commit ${rand(40, '0123456789abcdef')} id ${rand(8, '0123456789abcdef')}-${rand(4, '0123456789abcdef')}-${rand(4, '0123456789abcdef')}`;
      } else {
        const n = 4 + Math.floor(r() * 10);
        line = `  ${Array.from({ length: n }, () => pick(WORDS)).join(r() < 0.5 ? ' ' : '.')}(${pick(WORDS)}, ${Math.floor(r() * 1000)});`;
      }
      lines.push(line);
      size += line.length + 1;
    }
    const text = `${lines.join('\n')}\n`;
    writeFileSync(path.join(sub, `file${files}.ts`), text);
    bytes += text.length;
    files++;
  }
  return { files, bytes, planted };
}

/** Each rule's regex run separately over each file (what a scanner without a combined pass does). */
function naiveScan(root: string): number {
  const single = SECRET_RULE_DEFS.map((rule) => [rule]);
  let found = 0;
  for (const f of listFiles(root)) {
    const text = readFileSync(path.join(root, f), 'utf8');
    for (const rules of single) found += scanText(text, f, { rules }).length;
  }
  return found;
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const t0 = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}

function hasRg(): boolean {
  return spawnSync('rg', ['--version'], { encoding: 'utf8' }).status === 0;
}

function rgScan(root: string, threads?: number): { ms: number; matches: number } {
  const args = ['--no-ignore', '--hidden', '--no-filename', '--count-matches', ...(threads ? ['-j', String(threads)] : [])];
  for (const r of SECRET_RULE_DEFS) args.push('-e', r.source);
  args.push(root);
  const t = time(() => spawnSync('rg', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
  if (t.value.status !== 0 && t.value.status !== 1) throw new Error(`rg failed: ${t.value.stderr}`);
  const matches = t.value.stdout.split('\n').filter(Boolean).reduce((s, l) => s + Number(l), 0);
  return { ms: t.ms, matches };
}

function best<T extends { ms: number }>(runs: T[]): T {
  return runs.reduce((a, b) => (b.ms < a.ms ? b : a));
}

export async function runSkillsBench(megabytes = 50, repeats = 3): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-secrets-'));
  try {
    const gen = time(() => generateTree(dir, megabytes));
    const mb = gen.value.bytes / 1024 / 1024;
    console.log(`tree: ${gen.value.files} files, ${mb.toFixed(1)} MB, ${gen.value.planted} planted secrets (generated in ${(gen.ms / 1000).toFixed(1)} s)`);
    // Warm the page cache and the JIT once.
    naiveScan(dir);
    await scanTree(dir);
    const cadre: Array<{ ms: number; found: number }> = [];
    const naive: Array<{ ms: number; value: number }> = [];
    for (let i = 0; i < repeats; i++) {
      const c = await timeAsync(() => scanTree(dir));
      cadre.push({ ms: c.ms, found: c.value.findings.length });
      naive.push(time(() => naiveScan(dir)));
    }
    const c = best(cadre);
    const n = best(naive);
    const out: Record<string, number | string> = {
      megabytes: Number(mb.toFixed(1)),
      planted: gen.value.planted,
      cadreMs: Math.round(c.ms),
      cadreFindings: c.found,
      cadreMBps: Number((mb / (c.ms / 1000)).toFixed(1)),
      naiveMs: Math.round(n.ms),
      naiveOverCadre: Number((n.ms / c.ms).toFixed(2)),
    };
    console.log(`cadre scanner   ${c.ms.toFixed(0)} ms  (${out.cadreMBps} MB/s, ${c.found} findings)`);
    console.log(`naive per-rule  ${n.ms.toFixed(0)} ms  (${out.naiveOverCadre}x cadre, ${n.value} findings)`);
    if (!hasRg()) {
      console.log('ripgrep baseline skipped: `rg` is not installed (apt-get install -y ripgrep)');
      out.rg = 'skipped: rg not installed';
    } else {
      const rgAll = best(Array.from({ length: repeats }, () => rgScan(dir)));
      const rg1 = best(Array.from({ length: repeats }, () => rgScan(dir, 1)));
      out.rgMs = Math.round(rgAll.ms);
      out.rgMatches = rgAll.matches;
      out.rgSingleThreadMs = Math.round(rg1.ms);
      out.cadreOverRg = Number((c.ms / rgAll.ms).toFixed(2));
      out.cadreOverRgSingleThread = Number((c.ms / rg1.ms).toFixed(2));
      console.log(`ripgrep         ${rgAll.ms.toFixed(0)} ms  (all threads, ${rgAll.matches} raw matches); cadre/rg = ${out.cadreOverRg} (goal <= 3)`);
      console.log(`ripgrep -j1     ${rg1.ms.toFixed(0)} ms  cadre/rg-j1 = ${out.cadreOverRgSingleThread}`);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  const mbArg = Number(process.argv[2] ?? 50);
  runSkillsBench(Number.isFinite(mbArg) && mbArg > 0 ? mbArg : 50).then((r) => console.log(JSON.stringify(r)), (e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
