/**
 * What one workflow step costs in writes, records and bytes: runs full-sdlc workflows one at a time on
 * the engine wired as bench/langgraph.ts wires it (skills that do nothing) and prints, per step, the
 * durable journal writes, the bytes they carried, the audit records, the events, the
 * bus messages, and the size of a finished execution record. Counts, not times: they explain where
 * bench/langgraph.ts and bench/engine-cpu.ts spend theirs.
 * Run: node --import tsx bench/step-anatomy.ts [--runs 20]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Skill } from '../server/src/engine/rigor/skill';
import { benchSkill, openBenchEngine } from './bench-engine';
import { fullSdlcSubmitter } from './workflow-submit';

function flag(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : undefined;
}

function linesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    n += readFileSync(p, 'utf8').split('\n').filter(Boolean).length;
  }
  return n;
}

async function main(): Promise<void> {
  const runs = flag('--runs') ?? 20;
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-anatomy-'));
  try {
    // No compaction while counting: journal bytes are read from the store's counter, which a compaction resets.
    const { engine, store, flush, close } = await openBenchEngine(dir, { compactMinBytes: Number.MAX_SAFE_INTEGER });
    const skill = (agentId: string, action: string): Skill => benchSkill(agentId, action);
    const submitter = fullSdlcSubmitter(engine, skill);
    await submitter.submit('warm-up');
    await flush();
    const topics = new Map<string, number>();
    const bus = engine.bus as unknown as { publish(topic: string, msg: unknown): void };
    const publish = bus.publish.bind(bus);
    bus.publish = (topic, msg) => {
      topics.set(topic, (topics.get(topic) ?? 0) + 1);
      publish(topic, msg);
    };
    const s0 = store.stats();
    const audit0 = linesUnder(path.join(dir, 'audit'));
    const events0 = linesUnder(path.join(dir, 'events'));
    let steps = 0;
    let lastId = '';
    for (let i = 0; i < runs; i++) {
      const r = await submitter.submit(`run ${i}`);
      steps += r.steps;
      lastId = r.id;
    }
    await flush();
    const s1 = store.stats();
    const per = (x: number): string => (x / steps).toFixed(2);
    const rec = engine.executions.get(lastId);
    const json = JSON.stringify(rec);
    const gatesJson = JSON.stringify(rec.steps.map((s) => (s as { gates?: unknown }).gates ?? null));
    console.log(`step-anatomy: ${runs} full-sdlc runs, ${steps} steps`);
    console.log(`step-anatomy: durable journal writes per step: ${per(s1.writes - s0.writes)}; mutations per step: ${per(s1.mutations - s0.mutations)}`);
    console.log(`step-anatomy: journal bytes per step: ${per((s1.journalBytes ?? 0) - (s0.journalBytes ?? 0))} (cold segment bytes per step ${per((s1.coldBytes ?? 0) - (s0.coldBytes ?? 0))})`);
    console.log(`step-anatomy: audit records per step: ${per(linesUnder(path.join(dir, 'audit')) - audit0)}; events per step: ${per(linesUnder(path.join(dir, 'events')) - events0)}`);
    console.log(`step-anatomy: bus messages per step: ${[...topics].map(([t, n]) => `${t} ${per(n)}`).join(', ')}`);
    console.log(`step-anatomy: a finished execution record: ${json.length} bytes of JSON, of which the steps' gate tables ${gatesJson.length}`);
    console.log(`step-anatomy: store files: ${readdirSync(dir).map((f) => `${f} ${statSync(path.join(dir, f)).size}`).join(', ')}`);
    if (process.env.KEEP) { console.log(dir); process.exit(0); }
    await close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
