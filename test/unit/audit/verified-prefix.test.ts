/**
 * Incremental verification (issue 18, item 2): `verifyNew()` hashes only the records appended since its
 * last call, from the verified prefix on; `verify()` re-hashes everything. A record changed inside the
 * prefix is therefore invisible to `verifyNew()` and found by `verify()` (the documented split: views
 * refreshed often call verifyNew, start-up / govern-ai / `cadre audit verify` call verify).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AuditAnchor, AuditAnchorPort } from '../../../server/src/audit/audit-anchor';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { openStore, storeFilePath } from '../../../server/src/store';
import { storeAnchorPort } from '../../../server/src/store/store-health';

function memoryAnchor(): AuditAnchorPort & { value: AuditAnchor | null } {
  return { value: null, read() { return this.value; }, write(a) { this.value = a; } };
}

describe('audit trail: incremental verification from the verified prefix', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-vprefix-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const files = async (): Promise<string[]> => (await readdir(dir)).filter((n) => n.startsWith('audit-') && n.endsWith('.jsonl')).sort().map((n) => path.join(dir, n));
  async function tamper(file: string, from: string, to: string): Promise<void> {
    const text = await readFile(file, 'utf8');
    assert.ok(text.includes(from), `${from} in ${file}`);
    await writeFile(file, text.replace(from, to));
  }

  it('counts every record but hashes only the new ones: a change inside the prefix is seen by verify(), not verifyNew()', async () => {
    const trail = await openAuditTrail({ dir, anchor: memoryAnchor(), durable: false });
    for (let i = 0; i < 6; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 6 });
    for (let i = 6; i < 10; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 10 });
    await tamper((await files())[0]!, '"i":2', '"i":7');
    await trail.append({ kind: 'test.record', actor: 'engine', data: { i: 10 } });
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 11 }, 'the prefix is not hashed again');
    const full = await trail.verify();
    assert.equal(full.ok, false);
    assert.match(full.firstBroken!.reason, /^tampered/);
    assert.equal(full.firstBroken!.seq, 3);
    await trail.close();
  });

  it('a change among the new records is found by verifyNew, with the full pass\'s report and alert', async () => {
    const trail = await openAuditTrail({ dir, anchor: memoryAnchor(), durable: false });
    for (let i = 0; i < 5; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.equal((await trail.verifyNew()).ok, true);
    for (let i = 5; i < 8; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    await tamper((await files())[0]!, '"i":6', '"i":1');
    const v = await trail.verifyNew();
    assert.equal(v.ok, false);
    assert.match(v.firstBroken!.reason, /^tampered/);
    assert.equal(v.firstBroken!.seq, 7);
    assert.equal(trail.alerts.length, 1, 'the break is kept as an alert, as verify() does');
    await trail.close();
  });

  it('the prefix\'s own last record rewritten is found (it is read again, and a full pass reports)', async () => {
    const trail = await openAuditTrail({ dir, anchor: memoryAnchor(), durable: false });
    for (let i = 0; i < 4; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.equal((await trail.verifyNew()).ok, true);
    await tamper((await files())[0]!, '"i":3', '"i":0');
    await trail.append({ kind: 'test.record', actor: 'engine', data: { i: 4 } });
    const v = await trail.verifyNew();
    assert.equal(v.ok, false);
    assert.equal(v.firstBroken!.seq, 4);
    await trail.close();
  });

  it('across day files: the new records of the next day are verified from the prefix in the previous one', async () => {
    let now = Date.parse('2026-03-01T23:59:58Z');
    const trail = await openAuditTrail({ dir, anchor: memoryAnchor(), durable: false, clock: { now: () => now } });
    for (let i = 0; i < 3; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 3 });
    now = Date.parse('2026-03-02T00:00:05Z');
    for (let i = 3; i < 6; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.equal((await files()).length, 2);
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 6 });
    await trail.append({ kind: 'test.record', actor: 'engine', data: { i: 6 } });
    await tamper((await files())[1]!, '"i":6', '"i":5');
    const v = await trail.verifyNew();
    assert.equal(v.ok, false);
    assert.equal(v.firstBroken!.seq, 7);
    await trail.close();
  });

  it('in journaled mode (the server\'s): appends after a verification are verified and counted', async () => {
    const store = await openStore({ file: storeFilePath(dir) });
    const trail = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), journal: store.auditJournal!() });
    for (let i = 0; i < 5; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 5 });
    await Promise.all(Array.from({ length: 7 }, (_, i) => trail.append({ kind: 'test.record', actor: 'engine', data: { i: 5 + i } })));
    assert.deepEqual(await trail.verifyNew(), { ok: true, checked: 12 });
    assert.deepEqual(await trail.verify(), { ok: true, checked: 12 }, 'the same count as a full verification');
    await trail.close();
    await store.close();
  });
});
