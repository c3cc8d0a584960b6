/**
 * The journal store's cold tier (server/src/store/cold-segments.ts): records of a tiered collection
 * that are cold leave memory for append-only segment files, with only a summary and a location in
 * memory; they are read back by id, survive restarts and compactions, and segments nothing points at
 * any more are deleted. (The SIGKILL tests in crash-safety.test.ts write two rows in three cold.)
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openStore, storeFilePath, type Store } from '../../../server/src/store';

interface Row { id: string; status: 'running' | 'done'; body: string }
const TIERING = { isCold: (r: Row) => r.status === 'done', summary: (r: Row) => ({ id: r.id, status: r.status }) };
const BODY = 'x'.repeat(20_000);

function segments(dir: string): string[] {
  return readdirSync(dir).filter((n) => /^store\.cold-\d+\.jsonl$/.test(n)).sort();
}

describe('store: the cold tier of a tiered collection', function () {
  this.timeout(30_000);
  let dir: string;
  let store: Store | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-cold-'));
  });
  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function open(tier = true, extra: Record<string, unknown> = {}): Promise<Store> {
    // Moved at once (coldDelayMs 0): these tests look at the segments right after a write.
    store = await openStore({ file: storeFilePath(dir), coldDelayMs: 0, ...extra });
    if (tier) store.tier!('rows', TIERING);
    return store;
  }

  it('a cold record leaves memory once durable: get reads it back from its segment, summaries come from memory', async () => {
    const s = await open();
    const rows = s.collection<Row>('rows');
    await rows.put({ id: 'a', status: 'running', body: BODY });
    await rows.put({ id: 'b', status: 'done', body: BODY });
    assert.deepEqual(s.stats().coldRecords, 1);
    assert.equal(rows.count(), 2);
    assert.deepEqual(rows.get('b'), { id: 'b', status: 'done', body: BODY });
    assert.deepEqual(rows.summaries!(TIERING.summary).map((x) => x.id).sort(), ['a', 'b']);
    assert.deepEqual(rows.summaries!(TIERING.summary).find((x) => x.id === 'b'), { id: 'b', status: 'done' }, 'only the summary is in memory');
    assert.equal(segments(dir).length, 1);
    assert.ok(readFileSync(path.join(dir, segments(dir)[0]!), 'utf8').includes('"id":"b"'));
  });

  it('a record written cold from the start (an import) goes to its segment at once, not whole into the journal', async () => {
    const s = await open(true, { coldDelayMs: 60_000 });
    await s.collection<Row>('rows').put({ id: 'imported', status: 'done', body: BODY });
    assert.equal(s.stats().coldRecords, 1);
    assert.ok(s.stats().journalBytes! < BODY.length, 'the journal holds its location, not its body');
  });

  it('records that went cold move to a segment together after coldDelayMs: one segment write and one journal line for the group', async () => {
    const s = await open(true, { coldDelayMs: 150 });
    const rows = s.collection<Row>('rows');
    await Promise.all(Array.from({ length: 10 }, (_, i) => rows.put({ id: `r${i}`, status: 'running', body: BODY })));
    for (let i = 0; i < 10; i++) await rows.put({ id: `r${i}`, status: 'done', body: BODY });
    assert.equal(s.stats().coldRecords, 0, 'still in memory right after their writes');
    const writes = s.stats().writes!;
    for (let i = 0; i < 100 && s.stats().coldRecords! < 10; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(s.stats().coldRecords, 10, 'moved within the delay');
    assert.equal(s.stats().writes! - writes, 1, 'one journal line for the whole group');
    const seg = readFileSync(path.join(dir, segments(dir)[0]!), 'utf8');
    assert.equal(seg.trim().split('\n').length, 10, 'one segment holding the ten');
    await s.close();
    const again = await open(true, { coldDelayMs: 150 });
    assert.equal(again.stats().coldRecords, 10);
    assert.deepEqual(again.collection<Row>('rows').get('r7'), { id: 'r7', status: 'done', body: BODY });
  });

  it('a record still waiting to move at close stays journalled and moves when the tier is declared at the next open', async () => {
    const s = await open(true, { coldDelayMs: 60_000 });
    await s.collection<Row>('rows').put({ id: 'w', status: 'running', body: BODY });
    await s.collection<Row>('rows').put({ id: 'w', status: 'done', body: BODY });
    assert.equal(s.stats().coldRecords, 0, 'waiting in memory');
    await s.close();
    const again = await open(true, { coldDelayMs: 60_000 });
    for (let i = 0; i < 100 && again.stats().coldRecords! < 1; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(again.stats().coldRecords, 1);
    assert.deepEqual(again.collection<Row>('rows').get('w'), { id: 'w', status: 'done', body: BODY });
  });

  it('survives a restart and a compaction: the snapshot holds locations and summaries, not the cold bodies', async () => {
    let s = await open();
    let rows = s.collection<Row>('rows');
    for (let i = 0; i < 50; i++) await rows.put({ id: `r${i}`, status: i < 45 ? 'done' : 'running', body: BODY });
    await s.close();
    s = await open(false); // a reader that never declared the tier still reads cold records
    rows = s.collection<Row>('rows');
    assert.equal(rows.count(), 50);
    assert.equal(rows.get('r3')?.body, BODY);
    const c = await s.compact!();
    assert.ok(c.snapshotBytes < 10 * 20_000, `the snapshot holds the 5 hot bodies and 45 locations (${c.snapshotBytes} bytes)`);
    await s.close();
    s = await open();
    rows = s.collection<Row>('rows');
    assert.equal(rows.count(), 50);
    assert.equal(rows.get('r44')?.body, BODY);
    assert.equal(rows.get('r49')?.status, 'running');
    assert.equal(s.stats().coldRecords, 45);
  });

  it('update and delete of a cold record: the newest version wins across a restart', async () => {
    let s = await open();
    let rows = s.collection<Row>('rows');
    await rows.put({ id: 'a', status: 'done', body: 'first' });
    await rows.update('a', { body: 'second' });
    await rows.put({ id: 'b', status: 'done', body: 'gone' });
    await rows.delete('b');
    await rows.put({ id: 'c', status: 'done', body: 'cold' });
    await rows.put({ id: 'c', status: 'running', body: 'hot again' });
    assert.equal(rows.get('a')?.body, 'second');
    assert.equal(rows.get('b'), undefined);
    await s.close();
    s = await open();
    rows = s.collection<Row>('rows');
    assert.equal(rows.get('a')?.body, 'second');
    assert.equal(rows.get('b'), undefined);
    assert.equal(rows.get('c')?.body, 'hot again');
    assert.equal(rows.count(), 2);
    assert.equal(s.stats().coldRecords, 1);
  });

  it('declaring a tier over a store written without one moves its cold records out of memory', async () => {
    let s = await open(false);
    let rows = s.collection<Row>('rows');
    for (let i = 0; i < 1200; i++) void rows.put({ id: `r${i}`, status: i % 4 === 0 ? 'running' : 'done', body: 'b' });
    await s.close();
    s = await open(true);
    rows = s.collection<Row>('rows');
    for (let i = 0; i < 100 && s.stats().coldRecords! < 900; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(s.stats().coldRecords, 900);
    assert.equal(rows.count(), 1200);
    assert.equal(rows.get('r1')?.status, 'done');
    await s.close();
    s = await open();
    assert.equal(s.stats().coldRecords, 900, 'the move is durable');
  });

  it('a segment nothing points at any more is deleted at the next compaction; the one being appended to stays', async () => {
    let s = await open(true, { coldSegmentMaxBytes: 50_000 });
    let rows = s.collection<Row>('rows');
    for (let i = 0; i < 12; i++) await rows.put({ id: `r${i}`, status: 'done', body: BODY });
    const before = segments(dir);
    assert.ok(before.length >= 4, `several segments (${before.join(', ')})`);
    for (let i = 0; i < 8; i++) await rows.delete(`r${i}`);
    await s.compact!();
    const after = segments(dir);
    assert.ok(after.length < before.length, `${before.length} -> ${after.length} segments`);
    for (let i = 8; i < 12; i++) assert.equal(rows.get(`r${i}`)?.body, BODY);
    await s.close();
    s = await open();
    rows = s.collection<Row>('rows');
    for (let i = 8; i < 12; i++) assert.equal(rows.get(`r${i}`)?.body, BODY, `r${i} after restart`);
    assert.equal(rows.count(), 4);
  });

  it('a crash after the segment write and before the journal line leaves the previous version (never a dangling pointer)', async () => {
    let s = await open();
    let rows = s.collection<Row>('rows');
    await rows.put({ id: 'a', status: 'running', body: 'v1' });
    await s.close();
    // The segment bytes of a write whose journal line never came are garbage: simulate by appending them.
    const s2 = await openStore({ file: storeFilePath(dir), coldDelayMs: 0, onColdWritten: () => { throw new Error('crash after the segment write'); } });
    s2.tier!('rows', TIERING);
    await assert.rejects(s2.collection<Row>('rows').put({ id: 'a', status: 'done', body: 'v2' }), /crash after the segment write/);
    await s2.close().catch(() => undefined);
    s = await open();
    rows = s.collection<Row>('rows');
    assert.equal(rows.get('a')?.body, 'v1', 'the unacknowledged cold write is not there');
    assert.ok(statSync(path.join(dir, segments(dir)[0]!)).size > 0, 'its bytes are garbage in the segment');
  });
});
