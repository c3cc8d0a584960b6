import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Identified } from '../../../server/src/engine/ports';
import { listJournals, openStore, storeFilePath, type Migration, type Store, type StoreData } from '../../../server/src/store';
import { executionRecordProblem } from '../../../server/src/store/record-validators';
import { rng } from '../../support/prng';

interface Task extends Identified {
  title: string;
  status: string;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('store: journal store (append-only journal + compacted snapshot)', () => {
  let dir: string;
  let file: string;
  let store: Store | undefined;
  let lines: string[];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-journal-'));
    file = storeFilePath(dir);
    lines = [];
  });

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const open = async (extra: Partial<Parameters<typeof openStore>[0]> = {}): Promise<Store> => {
    store = await openStore({ file, log: (l) => lines.push(l), ...extra });
    return store;
  };
  const journalText = async (): Promise<string> => {
    let text = '';
    for (const j of await listJournals(file)) text += await readFile(j.path, 'utf8');
    return text;
  };

  it('starts empty without writing anything', async () => {
    const s = await open();
    assert.equal(s.durability, 'group');
    await s.flush();
    assert.equal(s.stats().writes, 0);
    assert.deepEqual(await readdir(dir), []);
  });

  it('coalesces the mutations of a tick into one journal record, and writes no snapshot', async () => {
    const s = await open();
    const tasks = s.collection<Task>('tasks');
    const ps: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) ps.push(tasks.put({ id: `t${i}`, title: `T${i}`, status: 'queued' }));
    ps.push(tasks.update('t0', { status: 'running' }), tasks.delete('t1'));
    assert.equal(tasks.count(), 99, 'memory changes at once');
    await Promise.all(ps);
    assert.equal(s.stats().writes, 1);
    const text = await journalText();
    assert.equal(text.split('\n').filter(Boolean).length, 1, 'one journal line');
    const rec = JSON.parse(text) as { s: number; o: unknown[] };
    assert.equal(rec.s, 1);
    assert.equal(rec.o.length, 100, 'the put and the update of t0 coalesce, t1 keeps only its delete');
    assert.equal(existsSync(file), false, 'no whole-store write');
  });

  it('never has two appends in flight: mutations made meanwhile go out together next', async () => {
    const s = await open();
    const tasks = s.collection<Task>('tasks');
    const a = tasks.put({ id: 'a', title: 'A', status: 'q' });
    await tick(); // the append of a has started
    const later = ['b', 'c', 'd'].map((id) => tasks.put({ id, title: id, status: 'q' }));
    await Promise.all([a, ...later]);
    assert.equal(s.stats().writes, 2);
    assert.equal(s.stats().maxBatch, 3);
  });

  it('replays the journal on open: put, update, replace, delete, odd ids', async () => {
    let s = await open();
    const tasks = s.collection<Task>('tasks');
    await tasks.put({ id: 'x', title: 'X', status: 'queued' });
    await tasks.put({ id: 'y', title: 'Y', status: 'done' });
    await tasks.update('x', { status: 'running' });
    await tasks.put({ id: '__proto__', title: 'P', status: 'q' });
    assert.equal(await tasks.delete('y'), true);
    await s.close();
    s = await open();
    const again = s.collection<Task>('tasks');
    assert.deepEqual(again.get('x'), { id: 'x', title: 'X', status: 'running' });
    assert.equal(again.get('y'), undefined);
    assert.equal(again.get('__proto__')?.title, 'P');
    assert.equal(again.count(), 2);
    await again.put({ id: 'z', title: 'Z', status: 'q' });
    assert.equal(JSON.parse((await journalText()).trim().split('\n').pop()!).s, 6, 'sequence continues after reopen');
  });

  it('opens a store.json of the previous design as its snapshot and leaves it untouched', async () => {
    const old = JSON.stringify({ schemaVersion: 1, collections: { tasks: { a: { id: 'a', title: 'A', status: 'q' } } } });
    await writeFile(file, old);
    const s = await open();
    assert.equal(s.collection<Task>('tasks').get('a')?.title, 'A');
    await s.collection<Task>('tasks').put({ id: 'b', title: 'B', status: 'q' });
    assert.equal(await readFile(file, 'utf8'), old);
    await s.close();
    const again = await open();
    assert.deepEqual(again.collection<Task>('tasks').list().map((t) => t.id).sort(), ['a', 'b']);
  });

  it('drops a torn last journal record with a logged line and keeps every complete one', async () => {
    let s = await open();
    for (let i = 0; i < 5; i++) await s.collection<Task>('tasks').put({ id: `t${i}`, title: 'T', status: 'q' });
    await s.close();
    const [j] = await listJournals(file);
    await appendFile(j!.path, '{"s":6,"o":[["p","tasks",{"id":"t5","ti'); // a write cut by a crash
    s = await open();
    assert.equal(s.collection<Task>('tasks').count(), 5);
    assert.equal(s.collection<Task>('tasks').get('t5'), undefined);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /dropped a torn last record of \d+ bytes/);
    assert.ok(!(await readFile(j!.path, 'utf8')).includes('"t5"'), 'the torn bytes are gone');
    await s.collection<Task>('tasks').put({ id: 't6', title: 'T', status: 'q' });
    await s.close();
    s = await open();
    assert.equal(s.collection<Task>('tasks').count(), 6, 'the next append starts on a clean line');
  });

  it('refuses a journal with an unreadable record before readable ones, leaving the files untouched', async () => {
    let s = await open();
    for (let i = 0; i < 3; i++) await s.collection<Task>('tasks').put({ id: `t${i}`, title: 'T', status: 'q' });
    await s.close();
    store = undefined;
    const [j] = await listJournals(file);
    const text = await readFile(j!.path, 'utf8');
    const broken = text.replace('"t1"', '"t1');
    await writeFile(j!.path, broken);
    await assert.rejects(openStore({ file }), (err: unknown) => {
      assert.equal((err as { code?: string }).code, 'ERR_STORE');
      assert.match((err as Error).message, /corrupt.*line 2/);
      assert.ok((err as Error).message.includes(j!.path));
      return true;
    });
    assert.equal(await readFile(j!.path, 'utf8'), broken);
  });

  it('refuses a snapshot that does not parse, leaving it untouched', async () => {
    await writeFile(file, '{"schemaVersion":1,"collections":{"tasks":{');
    await assert.rejects(openStore({ file }), /corrupt/);
    assert.equal(await readFile(file, 'utf8'), '{"schemaVersion":1,"collections":{"tasks":{');
  });

  it('compacts in the background when the journal outgrows the threshold, and prunes older journals', async () => {
    const s = await open({ compactMinBytes: 4096 });
    const tasks = s.collection<Task>('tasks');
    for (let i = 0; i < 300; i++) await tasks.put({ id: `t${i % 50}`, title: `T${i}`.padEnd(40, '.'), status: 'q' });
    await s.flush();
    await s.compact!();
    const st = s.stats();
    assert.ok(st.compactions! >= 2, `compactions: ${st.compactions}`);
    assert.ok(st.lastCompactionAt);
    assert.ok(st.journalBytes! < 4096 + 200, `journal bytes ${st.journalBytes}`);
    const snap = JSON.parse(await readFile(file, 'utf8')) as StoreData & { journalSeq: number; compactedAt: string };
    assert.ok(snap.journalSeq > 0);
    assert.equal(Object.keys(snap.collections.tasks!).length, 50);
    assert.ok((await listJournals(file)).length <= 2);
    await s.close();
    const again = await open();
    assert.equal(again.collection<Task>('tasks').count(), 50);
    assert.equal(again.collection<Task>('tasks').get('t49')?.title, 'T299'.padEnd(40, '.'));
    assert.equal(again.stats().lastCompactionAt, snap.compactedAt, 'the last compaction survives a restart');
  });

  it('migrates step by step with backups of snapshot and journal, folding them into a snapshot of the new version', async () => {
    await writeFile(file, JSON.stringify({ schemaVersion: 1, collections: { tasks: { a: { id: 'a', name: 'A' } } } }));
    let s = await open();
    await s.collection<Identified & { name: string }>('tasks').put({ id: 'b', name: 'B' });
    await s.close();
    const migrations: Migration[] = [{
      version: 2,
      migrate: (d) => {
        for (const t of Object.values(d.collections.tasks ?? {})) {
          t.title = t.name;
          delete t.name;
        }
        return d;
      },
    }];
    s = await open({ migrations, schemaVersion: 2 });
    assert.equal(s.schemaVersion, 2);
    assert.deepEqual(s.collection('tasks').get('b'), { id: 'b', title: 'B' });
    const snap = JSON.parse(await readFile(file, 'utf8')) as StoreData;
    assert.equal(snap.schemaVersion, 2);
    assert.deepEqual(Object.keys(snap.collections.tasks!).sort(), ['a', 'b']);
    assert.ok(existsSync(`${file}.v1.bak`));
    assert.ok((await readdir(dir)).some((n) => /journal-\d+\.jsonl\.v1\.bak$/.test(n)), 'journal backed up too');
    await s.close();
    s = await open({ migrations, schemaVersion: 2 });
    assert.deepEqual(s.collection('tasks').get('a'), { id: 'a', title: 'A' });
  });

  it('quarantines a malformed execution record, naming file, collection, id and field', async () => {
    let s = await open();
    const now = new Date(0).toISOString();
    const valid = {
      id: 'task_fedcba9876543210', kind: 'task', status: 'completed', agents: ['review-ai'], steps: [],
      request: { prompt: 'p', capabilities: [], input: {} }, createdAt: now, startedAt: now, completedAt: now, updatedAt: now, resumes: 0,
    };
    assert.equal(executionRecordProblem(valid), null);
    await s.collection('executions').put(valid);
    await s.collection('executions').put({ ...valid, id: 'task_0123456789abcdef', steps: 'not an array' } as Identified);
    await s.collection('other').put({ id: 'keep' });
    await s.close();
    s = await open({ validators: { executions: executionRecordProblem } });
    assert.equal(s.collection('executions').get('task_0123456789abcdef'), undefined);
    assert.ok(s.collection('executions').get('task_fedcba9876543210'), 'a valid record stays');
    assert.equal(s.collection('other').count(), 1);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /collection "executions", record "task_0123456789abcdef" is malformed \(field steps: .*array/);
    assert.ok(lines[0]!.includes(file));
    const q = (await readFile(path.join(dir, 'quarantine', 'executions.jsonl'), 'utf8')).trim().split('\n');
    assert.equal(q.length, 1);
    assert.equal((JSON.parse(q[0]!) as { record: { steps: string } }).record.steps, 'not an array');
    assert.equal(s.stats().quarantined, 1);
    await s.close();
    s = await open({ validators: { executions: executionRecordProblem } });
    assert.equal(s.stats().quarantined, 0, 'the removal was journaled');
  });

  it('per-mutation durability appends once per mutation, in order', async () => {
    const s = await open({ durability: 'per-mutation' });
    const tasks = s.collection<Task>('tasks');
    await Promise.all([0, 1, 2, 3, 4].map((i) => tasks.put({ id: `t${i}`, title: 'T', status: 'q' })));
    assert.equal(s.stats().writes, 5);
    const seqs = (await journalText()).trim().split('\n').map((l) => (JSON.parse(l) as { s: number }).s);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5]);
  });

  it('journals an update as what changed since the record\'s previous line, and a reopen reads the same record', async () => {
    const s = await open();
    const execs = s.collection<Identified & { steps: Array<{ step: number; status: string; table: string[] }>; updatedAt: string }>('executions');
    const table = Array.from({ length: 21 }, (_, g) => `gate ${g}: a reason of a realistic length`);
    await execs.put({ id: 'wf_1', steps: Array.from({ length: 9 }, (_, k) => ({ step: k, status: 'pending', table })), updatedAt: 't0' });
    const cur = execs.get('wf_1')!;
    await execs.update('wf_1', { steps: cur.steps.map((st, k) => (k === 3 ? { ...st, status: 'completed' } : st)), updatedAt: 't1' });
    const last = JSON.parse((await journalText()).trim().split('\n').pop()!) as { o: unknown[][] };
    assert.deepEqual(last.o, [['u', 'executions', 'wf_1', [[['steps', 3, 'status'], 'completed'], [['updatedAt'], 't1']]]]);
    const memory = JSON.stringify(execs.get('wf_1'));
    await s.close();
    const again = await open();
    assert.equal(JSON.stringify(again.collection('executions').get('wf_1')), memory);
  });

  it('updates replayed across compactions (one asked for while a write is in flight) and reopens equal memory, key order included', async () => {
    const r = rng(5);
    let s = await open({ compactMinBytes: 16_000 });
    let deltas = 0;
    type Doc = Identified & { n: number; list: number[]; nested: { v: number; w?: string } };
    for (let round = 0; round < 6; round++) {
      const docs = s.collection<Doc>('docs');
      for (let i = 0; i < 120; i++) {
        const id = `d${Math.floor(r() * 8)}`;
        const cur = docs.get(id);
        const next: Doc = cur
          ? { ...cur, n: cur.n + 1, list: r() < 0.3 ? [...cur.list, i] : cur.list, nested: r() < 0.5 ? { ...cur.nested, v: i } : { v: cur.nested.v, w: `w${i}` } }
          : { id, n: 0, list: [], nested: { v: 0 } };
        const written = r() < 0.5 ? docs.put(next) : cur ? docs.update(id, next) : docs.put(next);
        // Now and then a compaction is asked for with this write in flight or pending: it waits for a safe point.
        if (i === 60) await Promise.all([written, s.compact!()]);
        else if (r() < 0.7) await written;
      }
      await s.flush();
      const memory = JSON.stringify(Object.fromEntries(docs.list().map((d) => [d.id, d])));
      deltas += (await journalText()).split('["u","docs"').length - 1;
      await s.close();
      s = await open({ compactMinBytes: 16_000 });
      const replayed = JSON.stringify(Object.fromEntries(s.collection<Doc>('docs').list().map((d) => [d.id, d])));
      assert.equal(replayed, memory, `round ${round}: the reopened store equals memory before the close`);
    }
    assert.ok(deltas > 20, `updates were journalled as deltas (${deltas} in the journals left at the closes)`);
  });

  it('a record changed in an open unit across a compaction is written whole after it (a delta from before the copy would not apply)', async () => {
    const s = await open();
    const docs = s.collection<Identified & { x: number; y: number }>('docs');
    await docs.put({ id: 'k', x: 1, y: 1 });
    const unit = s.unit!();
    void docs.update('k', { x: 2 }, { unit }); // memory changes now, the journal at the unit's commit
    await s.compact!(); // the snapshot holds x=2
    const done = docs.update('k', { x: 1, y: 2 }, { unit }); // x back to what the journal last held
    await unit.commit();
    await done;
    await s.close();
    const again = await open();
    assert.deepEqual(again.collection('docs').get('k'), { id: 'k', x: 1, y: 2 });
  });

  it('refuses a journal whose update names a record no earlier line or the snapshot holds', async () => {
    await writeFile(`${dir}/store.journal-000001.jsonl`, `${JSON.stringify({ s: 1, o: [['u', 'docs', 'nobody', [[['n'], 1]]]] })}\n${JSON.stringify({ s: 2, o: [['p', 'docs', { id: 'x' }]] })}\n`);
    await assert.rejects(openStore({ file }), /line 1: an update of docs "nobody", which no earlier record holds/);
  });

  it('close flushes, refuses later mutations and keeps reads', async () => {
    const s = await open();
    const tasks = s.collection<Task>('tasks');
    void tasks.put({ id: 'a', title: 'A', status: 'q' });
    await s.close();
    await s.close();
    await assert.rejects(tasks.put({ id: 'c', title: 'C', status: 'q' }), { code: 'ERR_STORE' });
    assert.equal(tasks.get('a')?.title, 'A');
    store = await openStore({ file });
    assert.equal(store.collection<Task>('tasks').count(), 1);
  });

  it('commit latency does not grow with the store: 5,000 records vs 500 under 2x (interleaved medians)', async function () {
    this.timeout(120_000);
    const small = await openStore({ file: storeFilePath(path.join(dir, 'small')) });
    const large = await openStore({ file: storeFilePath(path.join(dir, 'large')) });
    try {
      const pad = 'x'.repeat(2000); // 2 KB records, as in the measurement
      const seed = async (s: Store, n: number): Promise<void> => {
        const ps: Promise<void>[] = [];
        for (let i = 0; i < n; i++) ps.push(s.collection<Identified & { pad: string }>('rows').put({ id: `r${i}`, pad }));
        await Promise.all(ps);
      };
      await seed(small, 500);
      await seed(large, 5_000);
      const times: { small: number[]; large: number[] } = { small: [], large: [] };
      for (let i = 0; i < 40; i++) {
        for (const [name, s] of [['small', small], ['large', large]] as const) {
          const t0 = performance.now();
          await s.collection<Identified & { pad: string }>('rows').put({ id: `new${i}`, pad });
          times[name].push(performance.now() - t0);
        }
      }
      const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const ratio = median(times.large) / median(times.small);
      assert.ok(ratio < 2, `median commit at 5k / at 500 = ${ratio.toFixed(2)} (small ${median(times.small).toFixed(2)} ms)`);
    } finally {
      await small.close();
      await large.close();
    }
  });
});
