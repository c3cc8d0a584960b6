/**
 * The data directory's lock: an owner proves the lock's token (HMAC over a nonce) before anyone
 * attaches or sends it a key; a fake on the lock's port and a stale lock with a reused pid do not
 * block a start.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { generateKey } from '../../../server/src/auth/api-keys';
import { type LockInfo, lockProof, LOCK_FILE, OwnerLock, processStartMs, provenOwner, readLock } from '../../../server/src/host/owner-lock';
import { startRuntime, type Runtime } from '../../../server/src/host/runtime';
import { withKeysBackend } from '../../../cli/src/keys';

/** A program that answers /v1/health like Cadre does, but does not know the token. */
async function fakeCadre(): Promise<{ port: number; seen: IncomingHttpHeaders[]; close(): Promise<void>; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json', 'x-cadre-lock-proof': 'f'.repeat(64) });
    res.end(JSON.stringify({ status: 'ok', service: 'cadre', version: '0.1.0', pid: process.pid, uptime_s: 1, components: {} }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, seen, server, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function writeLock(dir: string, info: LockInfo): void {
  writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(info), { mode: 0o600 });
}

describe('data directory lock: proof of ownership', function () {
  this.timeout(60_000);
  let dir: string;
  const runtimes: Runtime[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cadre-lock-'));
  });
  afterEach(async () => {
    for (const rt of runtimes.splice(0).reverse()) await rt.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a token the owner proves by HMAC on /v1/health, in a file only its user can read; a second start attaches', async () => {
    const rt = await startRuntime({ dataDir: dir, port: 0, env: { CADRE_API_KEY: generateKey() }, log: () => {} });
    runtimes.push(rt);
    assert.equal(rt.attached, false);
    const lock = readLock(path.join(dir, LOCK_FILE))!;
    assert.match(lock.token!, /^[0-9a-f]{64}$/);
    assert.equal(statSync(path.join(dir, LOCK_FILE)).mode & 0o077, 0, 'not readable by group or others');
    const res = await request(`${rt.url}/v1/health`, { headers: { 'x-cadre-lock-nonce': 'n-123' } });
    await res.body.dump();
    assert.equal(res.headers['x-cadre-lock-proof'], lockProof(lock.token!, 'n-123'));
    const plain = await request(`${rt.url}/v1/health`);
    await plain.body.dump();
    assert.equal(plain.headers['x-cadre-lock-proof'], undefined, 'no proof without a nonce');
    assert.equal((await provenOwner(dir))?.pid, process.pid);

    const second = await startRuntime({ dataDir: dir, port: 0, env: {}, log: () => {} });
    runtimes.push(second);
    assert.equal(second.attached, true);
    assert.equal(second.url, rt.url);
  });

  it('refuses a fake owner on the lock\'s port (answers {"service":"cadre"} without the proof): the start takes over, no key is sent', async () => {
    const fake = await fakeCadre();
    try {
      // A live pid (this test runner, with its true start time) and the fake's port: only the proof tells them apart.
      writeLock(dir, { pid: process.pid, port: fake.port, startedAt: new Date().toISOString(), version: '0.1.0', token: randomBytes(32).toString('hex'), ...(processStartMs(process.pid) !== null ? { procStart: processStartMs(process.pid)! } : {}) });
      assert.equal(await provenOwner(dir), null);
      const key = generateKey();
      const rt = await startRuntime({ dataDir: dir, port: 0, env: { CADRE_API_KEY: key }, log: () => {} });
      runtimes.push(rt);
      assert.equal(rt.attached, false, 'this process owns the data directory now');
      assert.notEqual(rt.port, fake.port);
      assert.ok(fake.seen.length >= 1, 'the fake was asked for the proof');
      for (const h of fake.seen) {
        assert.equal(h.authorization, undefined, 'no key went to the fake');
        assert.match(String(h['x-cadre-lock-nonce']), /^[0-9a-f]{32}$/);
      }
      assert.ok(!JSON.stringify(fake.seen).includes(readLock(path.join(dir, LOCK_FILE))!.token!), 'the token never travels');
    } finally {
      await fake.close();
    }
  });

  it('the CLI does not send CADRE_API_KEY to a fake owner: it takes the stale lock and works on the store', async () => {
    const fake = await fakeCadre();
    const before = process.env['CADRE_API_KEY'];
    process.env['CADRE_API_KEY'] = generateKey();
    try {
      writeLock(dir, { pid: process.pid, port: fake.port, startedAt: new Date().toISOString(), version: '0.1.0', token: randomBytes(32).toString('hex'), ...(processStartMs(process.pid) !== null ? { procStart: processStartMs(process.pid)! } : {}) });
      const where = await withKeysBackend(dir, undefined, async (b) => b.where);
      assert.equal(where, `the store in ${dir}`);
      assert.ok(fake.seen.every((h) => h.authorization === undefined));
      assert.equal(readLock(path.join(dir, LOCK_FILE)), null, 'released after the change');
    } finally {
      if (before === undefined) delete process.env['CADRE_API_KEY'];
      else process.env['CADRE_API_KEY'] = before;
      await fake.close();
    }
  });

  it('does not let a stale lock whose pid was reused (the test runner\'s pid, another start time) block a start', async function () {
    // The start time of a process that really existed, then died: the lock's writer.
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 200));
    const writerStart = processStartMs(child.pid!);
    child.kill('SIGKILL');
    if (writerStart === null) this.skip(); // no /proc: pid reuse is not detectable by start time here
    // Its pid is now "reused" by this test runner, alive; the port was never written (it died starting).
    writeLock(dir, { pid: process.pid, port: null, startedAt: new Date(writerStart!).toISOString(), version: '0.1.0', token: randomBytes(32).toString('hex'), procStart: writerStart! });
    const t0 = Date.now();
    const outcome = await OwnerLock.acquire(dir, '0.1.0', 5_000);
    try {
      assert.equal(outcome.owner, true);
      assert.ok(Date.now() - t0 < 5_000, 'recovered without waiting for the deadline');
    } finally {
      if (outcome.owner) outcome.lock.release();
    }
  });

  it('treats a lock whose port refuses connections as stale (an owner writes its port only once it listens)', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    writeLock(dir, { pid: process.pid, port: closedPort, startedAt: new Date().toISOString(), version: '0.1.0', token: randomBytes(32).toString('hex'), ...(processStartMs(process.pid) !== null ? { procStart: processStartMs(process.pid)! } : {}) });
    const outcome = await OwnerLock.acquire(dir, '0.1.0', 5_000);
    assert.equal(outcome.owner, true);
    if (outcome.owner) outcome.lock.release();
  });

  it('a live pid that never proves anything is reported after the wait, with what to do', async () => {
    writeLock(dir, { pid: process.pid, port: null, startedAt: new Date().toISOString(), version: '0.1.0', token: randomBytes(32).toString('hex'), ...(processStartMs(process.pid) !== null ? { procStart: processStartMs(process.pid)! } : {}) });
    await assert.rejects(OwnerLock.acquire(dir, '0.1.0', 300), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'ERR_DATA_DIR_LOCKED');
      assert.match(e.message, /has not proven it owns it .* delete .*cadre\.lock/);
      return true;
    });
    assert.ok(readFileSync(path.join(dir, LOCK_FILE), 'utf8').includes(String(process.pid)), 'the lock is left alone');
  });
});
