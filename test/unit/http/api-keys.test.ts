import { strict as assert } from 'node:assert';
import { ApiKeys, type ApiKeyRecord, hashKey } from '../../../server/src/auth/api-keys';
import { Sessions, type SessionRecord } from '../../../server/src/auth/sessions';
import { MemoryRepository } from '../../support/fakes';
import { ManualClock } from './harness';

describe('API keys and sessions', () => {
  it('verifies keys (repeatedly, from the in-memory cache too) and refuses them once revoked', async () => {
    const repo = new MemoryRepository<ApiKeyRecord>();
    const keys = new ApiKeys(repo);
    const a = await keys.create('a', 'startup');
    const b = await keys.create('b', 'scale');
    assert.equal(repo.get(a.record.id)!.hash, hashKey(a.key));
    assert.ok(!JSON.stringify([...repo.records.values()]).includes(a.key));
    for (let i = 0; i < 3; i++) {
      assert.equal(keys.verify(a.key)?.id, a.record.id);
      assert.equal(keys.verify(b.key)?.id, b.record.id);
    }
    // Same public prefix, different secret: not the cached key.
    assert.equal(keys.verify(a.key.slice(0, 12) + 'x'.repeat(a.key.length - 12)), null);
    assert.equal(keys.verify(a.key + 'x'), null);
    assert.equal(keys.verify(''), null);
    await keys.revoke(a.record.id);
    assert.equal(keys.verify(a.key), null, 'the cached key is refused at once');
    assert.equal(keys.verify(b.key)?.id, b.record.id);
    const again = await keys.revoke(a.record.id);
    assert.equal(again.revokedAt, repo.get(a.record.id)!.revokedAt, 'revoking twice keeps the first time');
    await assert.rejects(keys.revoke('key_nope'), (e: { code: string }) => e.code === 'ERR_NOT_FOUND');
  });

  it('opens sessions bound to a key, stores only the token hash, ends them with the key or after 8 h', async () => {
    const clock = new ManualClock();
    const keys = new ApiKeys(new MemoryRepository<ApiKeyRecord>(), clock.now);
    const repo = new MemoryRepository<SessionRecord>();
    const sessions = new Sessions(repo, keys, clock);
    const k = await keys.create('k');
    const s = await sessions.create(k.record);
    assert.match(s.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(s.record.id, hashKey(s.token));
    assert.ok(!JSON.stringify([...repo.records.values()]).includes(s.token));
    assert.equal(sessions.verify(s.token)?.key.id, k.record.id);
    assert.equal(sessions.verify('x'.repeat(43)), null);
    assert.equal(sessions.verify('not a token'), null);

    clock.advance(8 * 3600_000);
    assert.equal(sessions.verify(s.token), null, 'expired');
    const s2 = await sessions.create(k.record);
    assert.equal(repo.records.size, 1, 'opening a session purged the expired one');
    await keys.revoke(k.record.id);
    assert.equal(sessions.verify(s2.token), null, 'a revoked key\'s session is refused before any cleanup');
    assert.equal(await sessions.endForKey(k.record.id), 1);
    assert.equal(repo.records.size, 0);
  });
});
