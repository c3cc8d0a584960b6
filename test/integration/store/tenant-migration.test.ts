import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { openStore, storeFilePath } from '../../../server/src/store/lowdb-store';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

/**
 * Issue 14: a store from before tenants (no record names a tenant, no tenants collection) opens as the
 * default tenant's: its key sees every execution and project as before, nothing is rewritten, and a
 * tenant made afterwards sees none of it. The old store is made from a real one by taking the tenant
 * out of every record with the store's own API while the server is stopped.
 */
describe('a single-tenant store from before tenants', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) await stop(s);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('opens as the default tenant: every old execution and project is its own, a new tenant sees none', async () => {
    ensureBuilt();
    const dataDir = tempDir('cadre-tenant-migration-');
    const ws = tempDir('cadre-tenant-migration-ws-');
    dirs.push(dataDir, ws);
    writeFileSync(path.join(ws, 'app.js'), 'module.exports = () => 1;\n');
    let server = await startStandalone(dataDir, { CADRE_API_KEY: KEY });
    servers.push(server);
    let a = api(server.url);
    const run = await a.post('/v1/admin/rigor/invoke/security-ai', { prompt: 'scan', source: ws });
    assert.equal(run.status, 202, run.text);
    const ran = await a.until(run.body['statusUrl'] as string, undefined, 60_000);
    assert.equal(ran['status'], 'completed', String(ran['reason']));
    const project = await a.post('/v1/projects', { name: 'legacy', repository: { type: 'local', url: ws } });
    assert.equal(project.status, 201, project.text);
    await stop(server);

    // Back to the shape of a store from before tenants.
    const store = await openStore({ file: storeFilePath(dataDir) });
    let stripped = 0;
    for (const name of store.collectionNames()) {
      const repo = store.collection<{ id: string; tenantId?: string }>(name);
      for (const rec of repo.list()) {
        if (name === 'tenants') {
          await repo.delete(rec.id);
          continue;
        }
        if (rec.tenantId === undefined) continue;
        const { tenantId: _t, ...old } = rec;
        await repo.put(old as { id: string });
        stripped++;
      }
    }
    await store.close();
    assert.ok(stripped >= 2, `${stripped} record(s) had a tenant (the execution and the project at least)`);

    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY });
    servers.push(server);
    a = api(server.url);
    const me = await a.get('/v1/tenant');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body['id'], 'tnt_default');
    assert.equal((await a.get(`/v1/admin/rigor/status/${run.body['executionId'] as string}`)).status, 200, 'the old execution is the default tenant\'s');
    assert.equal((await a.get(`/v1/projects/${project.body['id'] as string}`)).status, 200);
    // Counted as the default tenant's usage, like any execution of its own.
    const used = (name: string, body: Json) => ((body['usage'] as Json[]).find((q) => q['name'] === name))!['used'];
    assert.equal(used('executionsPerDay', me.body), 1, me.text);
    assert.equal(used('projects', me.body), 1, me.text);
    // A tenant made now sees nothing of the old store.
    const t = await a.post('/v1/admin/tenants', { name: 'newcomer' });
    const k = await a.post(`/v1/admin/tenants/${t.body['id'] as string}/keys`, { label: 'newcomer' });
    const b = api(server.url, k.body['key'] as string);
    assert.equal((await b.get(`/v1/admin/rigor/status/${run.body['executionId'] as string}`)).status, 404);
    assert.equal((await b.get(`/v1/projects/${project.body['id'] as string}`)).status, 404);
    const bMe = await b.get('/v1/tenant');
    assert.deepEqual([used('executionsPerDay', bMe.body), used('projects', bMe.body)], [0, 0]);
  });
});
