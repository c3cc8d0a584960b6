/**
 * observe-ai benchmark (issue 12, "Measured"): the `analyze` skill over a Prometheus text file of N
 * samples and over an access log of M megabytes, as throughput and as a ratio to a plain parse of the
 * same input measured in the same run (read, split into lines, the value / status field turned into a
 * number: what any reader of these files pays at least).
 *
 *   node --import tsx bench/observe.ts [--samples 1000000] [--log-mb 1024] [--rounds 1]
 *
 * The inputs are generated in a temp folder (200 series of samples 15 s apart, seasonal with seeded
 * noise and one planted spike; nginx combined lines 30 a second with a 10-minute 5xx burst at 01:00
 * every day) and removed afterwards. Each round runs the plain
 * parse and the skill back to back, so a neighbour's load spoils both alike; the median ratio counts.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SkillContext } from '../server/src/engine/rigor/skill';
import { analyzeSkill, type AnalyzeData } from '../server/src/skills/observe/index';

function arg(name: string, d: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 ? Number(process.argv[i + 1]) : d;
}

const T0 = Date.UTC(2026, 2, 10);
const MON = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Seeded normal noise (mulberry32 + Box-Muller): the same input every run. */
function noise(seed: number): () => number {
  let a = seed >>> 0;
  const u = () => { a = (a + 0x6d2b79f5) >>> 0; let t = Math.imul(a ^ (a >>> 15), a | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  return () => Math.sqrt(-2 * Math.log(u() || 1e-12)) * Math.cos(2 * Math.PI * u());
}

function writeMetrics(file: string, samples: number): void {
  const series = 200;
  const r = noise(42);
  const per = Math.ceil(samples / series);
  const fd = openSync(file, 'w');
  writeSync(fd, '# TYPE api_latency_ms gauge\n');
  for (let s = 0; s < series; s++) {
    const out: string[] = [];
    for (let i = 0; i < per; i++) {
      const v = 100 + 4 * Math.sin((2 * Math.PI * i) / 30) + 2 * r() + (s === 0 && i === Math.floor(per / 2) ? 60 : 0);
      out.push(`api_latency_ms{pod="api-${s}",zone="eu"} ${v.toFixed(2)} ${T0 + i * 15_000}`);
    }
    writeSync(fd, out.join('\n') + '\n');
  }
  closeSync(fd);
}

function writeAccessLog(file: string, mb: number): number {
  const fd = openSync(file, 'w');
  let bytes = 0; let sec = 0; let lines = 0;
  const target = mb * 1024 * 1024;
  const p = (n: number) => String(n).padStart(2, '0');
  while (bytes < target) {
    const out: string[] = [];
    for (let k = 0; k < 60; k++, sec++) {
      const d = new Date(T0 + sec * 1000);
      const stamp = `${p(d.getUTCDate())}/${MON[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
      const burst = sec % 86_400 >= 3_600 && sec % 86_400 < 4_200; // 01:00..01:10 every day
      for (let r = 0; r < 30; r++) {
        const status = burst && r % 2 === 0 ? 502 : (lines + r) % 997 === 0 ? 500 : 200;
        out.push(`203.0.113.${(r % 250) + 1} - - [${stamp}] "GET /api/orders/${r} HTTP/1.1" ${status} ${512 + r} "-" "Mozilla/5.0 (X11; Linux x86_64)" 0.${String(50 + r).padStart(3, '0')}`);
      }
      lines += 30;
    }
    const chunk = out.join('\n') + '\n';
    writeSync(fd, chunk);
    bytes += Buffer.byteLength(chunk);
  }
  closeSync(fd);
  return bytes;
}

/** The floor: the file read, split into lines, the value field made a number. */
function plainMetrics(file: string): number {
  let n = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line || line[0] === '#') continue;
    const sp = line.split(' ');
    if (Number.isFinite(Number(sp[1]))) n++;
  }
  return n;
}

/** The floor: the file read in 4 MB chunks, split into lines, the status field made a number. */
function plainLog(file: string): number {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(4 * 1024 * 1024);
  let carry = ''; let n = 0;
  for (let pos = 0; ;) {
    const got = readSync(fd, buf, 0, buf.length, pos);
    if (got <= 0) break;
    pos += got;
    const lines = (carry + buf.toString('utf8', 0, got)).split('\n');
    carry = lines.pop()!;
    for (const l of lines) { const q = l.indexOf('" ', l.indexOf('"') + 1); if (Number(l.slice(q + 2, q + 5)) > 0) n++; }
  }
  closeSync(fd);
  return n;
}

async function analyze(ws: string, input: Record<string, unknown>): Promise<AnalyzeData> {
  const ctx: SkillContext = {
    request: { executionId: 'bench', step: 0, agentId: 'observe-ai', action: 'analyze', goal: { id: 'bench', prompt: 'bench' }, input, scope: 'mvp', tier: 'core', previous: [], workspace: ws },
    signal: new AbortController().signal, progress() {}, allowed: () => true, once: (_k, f) => f(),
  };
  const ev = await analyzeSkill.research(ctx);
  const a = await analyzeSkill.generate(ctx, ev);
  if (a.unable) throw new Error(a.unable);
  return a.data as AnalyzeData;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const samples = arg('samples', 1_000_000);
  const logMb = arg('log-mb', 1024);
  const rounds = arg('rounds', 1);
  // Two workspaces, so each run of the skill reads one kind of input only.
  const mWs = mkdtempSync(path.join(tmpdir(), 'cadre-bench-observe-m-'));
  const lWs = mkdtempSync(path.join(tmpdir(), 'cadre-bench-observe-l-'));
  try {
    mkdirSync(path.join(mWs, 'metrics'));
    mkdirSync(path.join(lWs, 'logs'));
    const mFile = path.join(mWs, 'metrics', 'api.prom');
    const lFile = path.join(lWs, 'logs', 'access.log');
    writeMetrics(mFile, samples);
    const logBytes = writeAccessLog(lFile, logMb);
    const mRatios: number[] = []; const lRatios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      const mPlainN = plainMetrics(mFile);
      const mPlain = performance.now() - t;
      t = performance.now();
      const md = await analyze(mWs, {});
      const mSkill = performance.now() - t;
      t = performance.now();
      const lPlainN = plainLog(lFile);
      const lPlain = performance.now() - t;
      t = performance.now();
      const ld = await analyze(lWs, {});
      const lSkill = performance.now() - t;
      mRatios.push(mSkill / mPlain); lRatios.push(lSkill / lPlain);
      console.log(JSON.stringify({
        round: r + 1,
        metrics: { samples: mPlainN, points: md.examined.points, anomalies: md.anomalies.length, plainMs: Math.round(mPlain), skillMs: Math.round(mSkill), samplesPerSec: Math.round(mPlainN / (mSkill / 1000)), ratio: +(mSkill / mPlain).toFixed(2) },
        logs: { mb: +(logBytes / 1048576).toFixed(1), lines: lPlainN, requests: ld.examined.requests, anomalies: ld.anomalies.map((a) => `${a.kind} ${a.start}..${a.end}`).slice(0, 3), plainMs: Math.round(lPlain), skillMs: Math.round(lSkill), mbPerSec: +((logBytes / 1048576) / (lSkill / 1000)).toFixed(1), ratio: +(lSkill / lPlain).toFixed(2) },
      }));
    }
    console.log(`observe-ai analyze: metrics x${median(mRatios).toFixed(2)} a plain parse, access log x${median(lRatios).toFixed(2)} a plain parse (median of ${rounds} round(s))`);
  } finally {
    rmSync(mWs, { recursive: true, force: true });
    rmSync(lWs, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e instanceof Error ? e.message : e); process.exit(1); });
