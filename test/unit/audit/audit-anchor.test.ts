import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AuditAnchor, AuditAnchorPort } from '../../../server/src/audit/audit-anchor';
import { openAuditTrail, verifyAuditDir } from '../../../server/src/audit/jsonl-audit-trail';
import { assertStorePresent, NEW_STORE_ENV } from '../../../server/src/store/missing-store';
import { openStore, storeFilePath } from '../../../server/src/store';
import { storeAnchorPort } from '../../../server/src/store/store-health';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = path.join(__dirname, '../../../cli/src/main.ts');

/** An anchor held in memory (the store's role), as the runtime wires it. */
function memoryAnchor(): AuditAnchorPort & { value: AuditAnchor | null } {
  return { value: null, read() { return this.value; }, write(a) { this.value = a; } };
}

describe('audit trail: the store anchors the chain head (truncation and deletion detected)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-anchor-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function trailWith(n: number, anchor: AuditAnchorPort): Promise<void> {
    const trail = await openAuditTrail({ dir, anchor, durable: false });
    for (let i = 0; i < n; i++) await trail.append({ kind: 'test.record', actor: 'engine', data: { i } });
    await trail.close();
  }
  const dayFile = async (): Promise<string> => path.join(dir, (await readdir(dir)).find((n) => n.startsWith('audit-'))!);

  it('updates the anchor after each durable group of records', async () => {
    const anchor = memoryAnchor();
    await trailWith(7, anchor);
    assert.equal(anchor.value?.seq, 7);
    assert.equal(anchor.value?.count, 7);
    assert.match(anchor.value!.file, /^audit-\d{4}-\d{2}-\d{2}\.jsonl$/);
    assert.equal(anchor.value?.alerts, undefined);
    const trail = await openAuditTrail({ dir, anchor, durable: false });
    assert.deepEqual(trail.alerts, []);
    assert.equal((await trail.verify()).ok, true);
    await trail.close();
  });

  it('detects the last 5 records dropped: alert at open, verify() and verifyAuditDir fail, the alert survives appends', async () => {
    const anchor = memoryAnchor();
    await trailWith(10, anchor);
    const file = await dayFile();
    const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    await writeFile(file, lines.slice(0, 5).map((l) => `${l}\n`).join(''));
    assert.equal((await verifyAuditDir(dir)).ok, true, 'the chain alone cannot see it');
    const dirCheck = await verifyAuditDir(dir, { anchor: anchor.value });
    assert.equal(dirCheck.ok, false);
    assert.match(dirCheck.firstBroken!.reason, /^truncated: .*10 records.*ends at seq 5/);

    const trail = await openAuditTrail({ dir, anchor, durable: false });
    assert.equal(trail.alerts.length, 1);
    assert.match(trail.alerts[0]!, /^missing tail: .*10 audit records.*ends at seq 5 \(5 record\(s\) dropped/);
    const v = await trail.verify();
    assert.equal(v.ok, false);
    for (let i = 0; i < 8; i++) await trail.append({ kind: 'later', actor: 'engine', data: {} });
    await trail.close();
    assert.equal(anchor.value?.seq, 13, 'the anchor follows the trail again');
    assert.equal(anchor.value?.alerts?.length, 1, 'but the evidence stays');
    const again = await openAuditTrail({ dir, anchor, durable: false });
    assert.equal(again.alerts.length, 1);
    assert.equal((await again.verify()).ok, false);
    await again.close();
  });

  it('detects deleted audit files', async () => {
    const anchor = memoryAnchor();
    await trailWith(4, anchor);
    await unlink(await dayFile());
    const trail = await openAuditTrail({ dir, anchor, durable: false });
    assert.match(trail.alerts[0] ?? '', /^missing files: .*4 audit records/);
    assert.equal((await trail.verify()).ok, false);
    await trail.close();
  });

  it('a record tampered mid-file is found by verify() and kept as an alert across a restart', async () => {
    const anchor = memoryAnchor();
    await trailWith(6, anchor);
    const file = await dayFile();
    await writeFile(file, (await readFile(file, 'utf8')).replace('"i":2', '"i":9'));
    const trail = await openAuditTrail({ dir, anchor, durable: false });
    assert.deepEqual(trail.alerts, [], 'the tail is intact: open alone does not see it');
    const v = await trail.verify();
    assert.equal(v.ok, false);
    assert.match(v.firstBroken!.reason, /^tampered/);
    assert.equal(trail.alerts.length, 1);
    await trail.close();
    const again = await openAuditTrail({ dir, anchor, durable: false });
    assert.match(again.alerts[0] ?? '', /^tampered/);
    await again.close();
  });

  it('cadre audit verify reads the anchor from the store files and exits 1 on a dropped tail', async function () {
    this.timeout(20_000);
    const file = storeFilePath(dir);
    const store = await openStore({ file });
    const trail = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), durable: false });
    for (let i = 0; i < 6; i++) await trail.append({ kind: 'k', actor: 'engine', data: { i } });
    await trail.close();
    await store.close();
    const ok = await run(process.execPath, ['--import', 'tsx', CLI, 'audit', 'verify', '--data-dir', dir]);
    assert.match(ok.stdout, /audit trail intact: 6 records verified/);
    const day = path.join(dir, 'audit', (await readdir(path.join(dir, 'audit')))[0]!);
    const lines = (await readFile(day, 'utf8')).split('\n').filter(Boolean);
    await writeFile(day, lines.slice(0, 4).map((l) => `${l}\n`).join(''));
    await assert.rejects(run(process.execPath, ['--import', 'tsx', CLI, 'audit', 'verify', '--data-dir', dir]), (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr ?? '', /audit trail broken at .*truncated: the store's anchor records 6 records/);
      return true;
    });
  });

  it('keeps the anchor in the store, across a restart of both', async () => {
    const file = storeFilePath(dir);
    const auditDir = path.join(dir, 'audit');
    let store = await openStore({ file });
    let trail = await openAuditTrail({ dir: auditDir, anchor: storeAnchorPort(store), durable: false });
    for (let i = 0; i < 3; i++) await trail.append({ kind: 'k', actor: 'engine', data: {} });
    await trail.close();
    await store.close();
    await rm(auditDir, { recursive: true, force: true });
    store = await openStore({ file });
    trail = await openAuditTrail({ dir: auditDir, anchor: storeAnchorPort(store), durable: false });
    assert.match(trail.alerts[0] ?? '', /^missing files/);
    await trail.close();
    await store.close();
  });
});

describe('start-up: a missing store beside existing audit or event files is refused', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-missing-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses with one line of instructions, unless started fresh explicitly', async () => {
    const file = storeFilePath(dir);
    assertStorePresent(file, dir, {}); // an empty data directory is a first start
    const trail = await openAuditTrail({ dir: path.join(dir, 'audit'), durable: false });
    await trail.append({ kind: 'k', actor: 'engine', data: {} });
    await trail.close();
    assert.throws(() => assertStorePresent(file, dir, {}), (err: Error) => {
      assert.match(err.message, /store .* is missing while audit records remain/);
      assert.ok(err.message.includes(`${NEW_STORE_ENV}=1`));
      assert.ok(!err.message.includes('\n'), 'one line');
      return true;
    });
    assertStorePresent(file, dir, { [NEW_STORE_ENV]: '1' });
    const store = await openStore({ file });
    await store.collection('x').put({ id: 'a' }); // a journal alone is a store
    await store.close();
    assertStorePresent(file, dir, {});
  });
});
