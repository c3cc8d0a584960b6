/**
 * The audit trail riding the store's journal (journaled mode): a step's audit records, counters and
 * checkpoint become durable in one journal record; the day files follow; a crash between the two is
 * repaired from the journal at open and seen by the read-only verification.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { asAnchor, AUDIT_ANCHOR_COLLECTION, AUDIT_ANCHOR_ID } from '../../../server/src/audit/audit-anchor';
import { openAuditTrail, verifyAuditDir, type AuditOpenWarning } from '../../../server/src/audit/jsonl-audit-trail';
import { listJournals, openStore, storeFilePath } from '../../../server/src/store';
import { readStoreReadOnly } from '../../../server/src/store/journal-store';
import { storeAnchorPort } from '../../../server/src/store/store-health';

interface Row { id: string; n: number }

describe('audit trail riding the store journal (one durable batch)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-jaudit-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const auditDir = (): string => path.join(dir, 'audit');
  async function open(opts: { compactMinBytes?: number } = {}) {
    const store = await openStore({ file: storeFilePath(dir), ...opts });
    const warnings: AuditOpenWarning[] = [];
    const trail = await openAuditTrail({ dir: auditDir(), anchor: storeAnchorPort(store), journal: store.auditJournal!(), onWarning: (w) => warnings.push(w) });
    return { store, trail, warnings };
  }
  async function journalLines(): Promise<Array<{ s: number; o: unknown[][]; a?: Array<{ seq: number }> }>> {
    const out = [];
    for (const j of await listJournals(storeFilePath(dir))) {
      for (const l of (await readFile(j.path, 'utf8')).split('\n').filter(Boolean)) out.push(JSON.parse(l));
    }
    return out;
  }
  async function dayFileLines(): Promise<string[]> {
    const names = (await readdir(auditDir())).filter((n) => n.endsWith('.jsonl')).sort();
    const out: string[] = [];
    for (const n of names) out.push(...(await readFile(path.join(auditDir(), n), 'utf8')).split('\n').filter(Boolean));
    return out;
  }

  it('records and store mutations of a tick go out in one journal record: no fsync of the trail\'s own, the day file follows', async () => {
    const { store, trail } = await open();
    const writes0 = store.stats().writes;
    const rows = store.collection<Row>('rows');
    const done = [
      ...Array.from({ length: 5 }, (_, i) => trail.append({ kind: 'phase.completed', actor: 'review-ai', executionId: 'exec_1', data: { i } })),
      rows.put({ id: 'r1', n: 1 }),
    ];
    await Promise.all(done);
    assert.equal(store.stats().writes - writes0, 1, 'one journal record');
    assert.equal(trail.stats().fsyncs, 0, 'the trail fsynced nothing itself');
    const last = (await journalLines()).pop()!;
    assert.deepEqual(last.a!.map((r) => r.seq), [1, 2, 3, 4, 5]);
    assert.ok(last.o.some((op) => op[1] === 'rows'), 'the row is in the same record');
    const anchorOp = last.o.find((op) => op[1] === AUDIT_ANCHOR_COLLECTION);
    assert.equal(asAnchor(anchorOp?.[2])?.seq, 5, 'the anchor of the new head is in the same record');
    await trail.flush();
    assert.equal((await dayFileLines()).length, 5);
    assert.equal((await trail.verify()).ok, true);
    await trail.close();
    await store.close();
  });

  it('a write unit holds its store writes and audit records until commit, then writes them in one journal record', async () => {
    const { store, trail } = await open();
    const rows = store.collection<Row>('rows');
    const unit = store.unit!();
    const put = rows.put({ id: 'r1', n: 1 }, { unit });
    const rec = trail.append({ kind: 'phase.completed', actor: 'review-ai', data: { step: 0 } }, { unit });
    assert.equal(rows.get('r1')?.n, 1, 'memory changes at once');
    rows.update('r1', { n: 2 }, { unit }).catch(() => undefined);
    const other = rows.put({ id: 'r2', n: 9 }); // outside the unit: goes out on its own
    await other;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await journalLines()).some((l) => l.o.some((op) => (op[2] as Row | undefined)?.id === 'r1') || l.a), false, 'nothing of the unit written before its commit');
    await unit.commit();
    await Promise.all([put, rec]);
    const lines = await journalLines();
    const mine = lines.filter((l) => l.a || l.o.some((op) => (op[2] as Row | undefined)?.id === 'r1'));
    assert.equal(mine.length, 1, 'one journal record holds the unit');
    assert.deepEqual(mine[0]!.o.find((op) => (op[2] as Row | undefined)?.id === 'r1')![2], { id: 'r1', n: 2 }, 'the record as memory holds it at commit');
    assert.equal(mine[0]!.a!.length, 1);
    assert.equal((await rec).seq, 1);
    await trail.close();
    await store.close();
  });

  it('a unit writes the newest state of a record changed after it outside the unit (never its own older copy)', async () => {
    const { store, trail } = await open();
    const rows = store.collection<Row>('rows');
    const unit = store.unit!();
    void rows.put({ id: 'r1', n: 1 }, { unit });
    await rows.put({ id: 'r1', n: 2 }); // durable first, outside the unit
    await unit.commit();
    await trail.close();
    await store.close();
    const again = await openStore({ file: storeFilePath(dir) });
    assert.equal(again.collection<Row>('rows').get('r1')?.n, 2);
    await again.close();
  });

  it('records durable in the journal but missing from the day file (a crash between): verifyAuditDir sees them with the journal, the next open restores them', async () => {
    const { store, trail } = await open();
    for (let i = 0; i < 8; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    await trail.close();
    await store.close();
    // As if the process died after the journal record and before the last three reached the day file.
    const day = (await readdir(auditDir())).find((n) => n.endsWith('.jsonl'))!;
    const lines = (await readFile(path.join(auditDir(), day), 'utf8')).split('\n').filter(Boolean);
    await writeFile(path.join(auditDir(), day), lines.slice(0, 5).map((l) => `${l}\n`).join(''));

    const journal: unknown[] = [];
    const collections = await readStoreReadOnly(storeFilePath(dir), journal);
    const anchor = asAnchor(collections?.[AUDIT_ANCHOR_COLLECTION]?.[AUDIT_ANCHOR_ID]);
    assert.equal(anchor?.seq, 8);
    assert.equal((await verifyAuditDir(auditDir(), { anchor })).ok, false, 'the files alone end early');
    const v = await verifyAuditDir(auditDir(), { anchor, journal });
    assert.ok(v.ok, JSON.stringify(v.firstBroken));
    assert.equal(v.checked, 8);

    const again = await open();
    assert.deepEqual(again.trail.alerts, []);
    assert.equal(again.warnings[0]?.code, 'journal_records_restored');
    assert.match(again.warnings[0]!.message, /restored 3 audit record\(s\) \(seq 6-8\)/);
    assert.equal((await dayFileLines()).length, 8);
    const rec = await again.trail.append({ kind: 'test.record', actor: 'engine', data: { i: 8 } });
    assert.equal(rec.seq, 9);
    assert.equal((await again.trail.verify()).ok, true);
    await again.trail.close();
    await again.store.close();
  });

  it('journal records that do not continue the trail are not restored and raise an alert', async () => {
    const { store, trail } = await open();
    for (let i = 0; i < 4; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    await trail.close();
    await store.close();
    // Tamper with a record inside the journal: its hash no longer recomputes.
    const j = (await listJournals(storeFilePath(dir))).pop()!;
    const text = await readFile(j.path, 'utf8');
    const day = (await readdir(auditDir())).find((n) => n.endsWith('.jsonl'))!;
    await writeFile(path.join(auditDir(), day), '');
    await writeFile(j.path, text.replace('"i":0', '"i":7'));
    const again = await open();
    // Also the anchor's alert: the files end before the head it recorded.
    assert.ok(again.trail.alerts.some((a) => /do not continue the trail \(record 1: its hash does not recompute\)/.test(a)), again.trail.alerts.join('; '));
    assert.equal(await readFile(path.join(auditDir(), day), 'utf8'), '', 'nothing restored');
    await again.trail.close();
    await again.store.close();
  });

  it('a compaction fsyncs the day files before it drops the journals that held their records', async () => {
    // The default threshold: no compaction starts on its own, the one below is the only one.
    const { store, trail } = await open();
    for (let i = 0; i < 60; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i, pad: 'x'.repeat(100) } });
    const fsyncs0 = trail.stats().fsyncs;
    await store.compact!();
    assert.ok(trail.stats().fsyncs > fsyncs0, 'the trail fsynced its day file for the compaction');
    await trail.close();
    await store.close();
    const journal: unknown[] = [];
    await readStoreReadOnly(storeFilePath(dir), journal);
    assert.equal(journal.length, 0, 'the compaction dropped the journal records holding audit records');
    const again = await open();
    assert.deepEqual(again.warnings, []);
    const v = await again.trail.verify();
    assert.ok(v.ok);
    assert.equal(v.checked, 60);
    await again.trail.close();
    await again.store.close();
  });

  it('a failed journal write rejects the records it held, uses up no seq, and puts the anchor back', async () => {
    const { store, trail } = await open();
    await trail.append({ kind: 'test.record', actor: 'engine', data: { i: 0 } });
    const journal = (store as unknown as { journal: { append(b: Buffer): Promise<number> } }).journal;
    const real = journal.append.bind(journal);
    journal.append = async () => {
      throw Object.assign(new Error('disk full (simulated)'), { code: 'ENOSPC' });
    };
    await assert.rejects(trail.append({ kind: 'test.record', actor: 'engine', data: { i: 1 } }), (err: { code?: string }) => err.code === 'ERR_STORE');
    journal.append = real;
    const rec = await trail.append({ kind: 'test.record', actor: 'engine', data: { i: 2 } });
    assert.equal(rec.seq, 2, 'the failed record used up no seq');
    await store.flush();
    assert.equal(asAnchor(store.collection(AUDIT_ANCHOR_COLLECTION).get(AUDIT_ANCHOR_ID))?.seq, 2);
    assert.equal((await trail.verify()).ok, true);
    await trail.close();
    await store.close();
    const again = await open();
    assert.deepEqual(again.trail.alerts, []);
    assert.equal((await again.trail.verify()).checked, 2);
    await again.trail.close();
    await again.store.close();
  });
});
