import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { adminStoreRoutes } from '../../../server/src/http/routes/admin-store';
import { openStore, storeFilePath, type Store } from '../../../server/src/store';
import { bearer, startTestApi, type TestApi } from '../http/harness';

const run = promisify(execFile);
const CLI = path.join(__dirname, '../../../cli/src/main.ts');

describe('store: GET /v1/admin/store, POST /v1/admin/store/compact and cadre store', function () {
  this.timeout(30_000);
  let dir: string;
  let store: Store;
  let api: TestApi;
  const audit = { lastSeq: 12, alerts: [] as string[] };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-admin-store-'));
    store = await openStore({ file: storeFilePath(dir) });
    await store.collection('executions').put({ id: 'task_1', createdAt: '2026-01-02T00:00:00.000Z' } as { id: string });
    await store.collection('executions').put({ id: 'task_2', createdAt: '2026-01-01T00:00:00.000Z' } as { id: string });
    api = await startTestApi({ routes: adminStoreRoutes({ store, dataDir: dir, audit }) });
  });
  afterEach(async () => {
    await api.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
    audit.alerts = [];
  });

  it('reports counts, oldest record, journal and last compaction; compact folds the journal', async () => {
    let res = await fetch(`${api.url}/v1/admin/store`, { headers: bearer(api.key) });
    assert.equal(res.status, 200);
    let body = (await res.json()) as { journalBytes: number; lastCompactionAt: string | null; collections: Array<{ name: string; count: number; oldest: string | null }>; audit: { records: number } };
    assert.deepEqual(body.collections.find((c) => c.name === 'executions'), { name: 'executions', count: 2, oldest: '2026-01-01T00:00:00.000Z' });
    assert.ok(body.journalBytes > 0);
    assert.equal(body.lastCompactionAt, null);
    assert.equal(body.audit.records, 12);

    res = await fetch(`${api.url}/v1/admin/store/compact`, { method: 'POST', headers: bearer(api.key) });
    assert.equal(res.status, 200);
    const c = (await res.json()) as { journalSeq: number; snapshotBytes: number };
    assert.ok(c.journalSeq >= 2 && c.snapshotBytes > 0);
    assert.ok(existsSync(storeFilePath(dir)));
    body = (await (await fetch(`${api.url}/v1/admin/store`, { headers: bearer(api.key) })).json()) as typeof body;
    assert.equal(body.journalBytes, 0);
    assert.ok(body.lastCompactionAt);
  });

  it('needs the admin role (problem+json otherwise)', async () => {
    const operator = await api.newKey('enterprise', 'op', 'operator');
    const res = await fetch(`${api.url}/v1/admin/store/compact`, { method: 'POST', headers: bearer(operator) });
    assert.equal(res.status, 403);
    assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  });

  it('cadre store stats prints the report, exits 1 on an audit alert; compact says what it wrote', async () => {
    const env = { ...process.env, CADRE_API_KEY: api.key };
    const stats = await run(process.execPath, ['--import', 'tsx', CLI, 'store', 'stats', '--url', api.url], { env });
    assert.match(stats.stdout, /^store .*store\.json \(schema 1\)/);
    assert.match(stats.stdout, /executions\s+2\s+2026-01-01T00:00:00\.000Z/);
    assert.match(stats.stdout, /server memory: RSS [\d.]+ MB, heap used [\d.]+ MB/);
    const compact = await run(process.execPath, ['--import', 'tsx', CLI, 'store', 'compact', '--url', api.url], { env });
    assert.match(compact.stdout, /^store compacted: snapshot [\d.]+ MB written in \d+ ms/);
    audit.alerts = ['missing tail: test'];
    await assert.rejects(run(process.execPath, ['--import', 'tsx', CLI, 'store', 'stats', '--url', api.url], { env }), (err: { code?: number; stdout?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stdout ?? '', /AUDIT ALERT: missing tail: test/);
      return true;
    });
    await assert.rejects(run(process.execPath, ['--import', 'tsx', CLI, 'store', 'stats', '--url', api.url], { env: { ...process.env, CADRE_API_KEY: '' } }),
      (err: { code?: number; stderr?: string }) => err.code === 4 && /set CADRE_API_KEY/.test(err.stderr ?? ''), 'no key: the auth exit code (docs/cli.md) and the command to fix it');
  });
});
