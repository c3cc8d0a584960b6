/** CADRE_API_KEY must look generated (hunter2 is refused); stored prefixes are short; old records migrate. */
import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { ApiKeys, type ApiKeyRecord, generateKey, hashKey, MASKED_PREFIX, weakKeyReason } from '../../../server/src/auth/api-keys';
import { startRuntime } from '../../../server/src/host/runtime';
import { MemoryRepository } from '../../support/fakes';
import { bearer, startTestApi } from './harness';

describe('API key format', () => {
  it('accepts a generated key and refuses weak or hand-made ones, saying why', () => {
    for (let i = 0; i < 200; i++) assert.equal(weakKeyReason(generateKey()), null);
    assert.match(weakKeyReason('hunter2')!, /does not start with "cadre_"/);
    assert.match(weakKeyReason('cadre_hunter2')!, /43 base64url characters/);
    assert.match(weakKeyReason(`cadre_${'a'.repeat(43)}`)!, /repetitive/);
    assert.match(weakKeyReason(`cadre_${'abcd'.repeat(10)}abc`)!, /repetitive/);
    assert.match(weakKeyReason(`cadre_${'A'.repeat(42)}!`)!, /base64url/);
  });

  it('adopts only a generated key, as an admin key with a short prefix', async () => {
    const keys = new ApiKeys(new MemoryRepository<ApiKeyRecord>());
    await assert.rejects(keys.adopt('hunter2', 'CADRE_API_KEY'), (e: { code: string }) => e.code === 'ERR_VALIDATION');
    const k = generateKey();
    const r = await keys.adopt(k, 'CADRE_API_KEY');
    assert.equal(r.role, 'admin');
    assert.equal(r.prefix, k.slice(0, 14));
    assert.equal(r.prefix.length, 'cadre_'.length + 8);
  });

  it('lists short prefixes only: never a whole short secret, never the key', async () => {
    const api = await startTestApi();
    try {
      const made = await api.newKey('startup', 'x', 'operator');
      const res = await request(`${api.url}/v1/admin/keys`, { headers: bearer(api.key) });
      const text = await res.body.text();
      const { keys } = JSON.parse(text) as { keys: Array<{ prefix: string; role: string }> };
      assert.ok(keys.length >= 2);
      for (const k of keys) assert.match(k.prefix, /^cadre_[A-Za-z0-9_-]{8}$/);
      assert.ok(!text.includes(made) && !text.includes(api.key));
      assert.deepEqual(keys.map((k) => k.role).sort(), ['admin', 'operator']);
    } finally {
      await api.close();
    }
  });

  it('migrates stored keys: no role → admin; a weak adopted key is revoked and its prefix hidden', async () => {
    const repo = new MemoryRepository<ApiKeyRecord>();
    const at = new Date().toISOString();
    await repo.put({ id: 'key_old', hash: hashKey('cadre_x'), prefix: 'cadre_Ab12Cd', label: 'first start', plan: 'enterprise', createdAt: at });
    await repo.put({ id: 'key_weak', hash: hashKey('hunter2'), prefix: 'hunter2', label: 'CADRE_API_KEY', plan: 'enterprise', createdAt: at });
    const keys = new ApiKeys(repo);
    const m = await keys.migrate();
    assert.deepEqual(m, { roles: 2, masked: ['key_weak'] });
    assert.equal(repo.get('key_old')!.role, 'admin');
    assert.equal(repo.get('key_old')!.prefix, 'cadre_Ab12Cd');
    assert.equal(repo.get('key_weak')!.prefix, MASKED_PREFIX);
    assert.ok(repo.get('key_weak')!.revokedAt);
    assert.equal(keys.verify('hunter2'), null);
    assert.deepEqual(await keys.migrate(), { roles: 0, masked: [] }, 'once');
  });

  it('refuses to start with CADRE_API_KEY=hunter2, in one line saying how to make a key', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cadre-h4-'));
    await assert.rejects(startRuntime({ dataDir, port: 0, env: { CADRE_API_KEY: 'hunter2' }, log: () => {} }), (e: Error) => {
      assert.ok(!e.message.includes('\n'), e.message);
      assert.match(e.message, /^CADRE_API_KEY is not a generated Cadre key .*cadre keys generate/);
      return true;
    });
  });
});
