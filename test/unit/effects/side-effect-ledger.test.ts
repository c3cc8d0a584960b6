import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { DurableSideEffectLedger } from '../../../server/src/engine/executions/side-effect-ledger';
import type { SideEffectRecord } from '../../../server/src/engine/executions/records';
import type { EffectResource } from '../../../server/src/engine/rigor/skill';
import { createHarness, MemoryStore, settled, testSkill } from '../../support/engine-harness';
import { MemoryRepository } from '../../support/fakes';

function ledger(opts: { released?: EffectResource[][] } = {}) {
  const repo = new MemoryRepository<SideEffectRecord>();
  let n = 0;
  const l = new DurableSideEffectLedger({
    repo, clock: { now: () => 1_700_000_000_000 }, newId: (p) => `${p}_${String(++n).padStart(24, '0')}`, log: () => {},
    ...(opts.released ? { resources: { release: async (r) => void opts.released!.push([...r]) } } : {}),
  });
  return { repo, l };
}

const WT: EffectResource = { kind: 'worktree', repo: '/repo', path: '/tmp/cadre-wt-abc' };

describe('side-effect ledger', () => {
  it('records the intent on disk before the effect starts and the outcome after it', async () => {
    const { repo, l } = ledger();
    let seenDuring: SideEffectRecord | undefined;
    const writesBefore = repo.writes;
    const out = await l.once('exec_1', 0, 1, 'push', async ({ effectId }) => {
      seenDuring = repo.get('exec_1:0:push');
      assert.equal(repo.writes, writesBefore + 1, 'the intent write completed before the effect');
      return { pushed: effectId };
    }, { resources: [WT] });
    assert.equal(seenDuring?.state, 'intent');
    assert.deepEqual(seenDuring?.resources, [WT], 'the worktree is named in the intent, before it exists');
    const done = repo.get('exec_1:0:push')!;
    assert.equal(done.state, 'done');
    assert.deepEqual(done.result, out);
    assert.deepEqual(done.resources, []);
    assert.equal(done.effectId, seenDuring?.effectId);
  });

  it('a recorded outcome is returned without running the effect or the reconcile again', async () => {
    const { l } = ledger();
    await l.once('exec_1', 0, 1, 'push', async () => 'first');
    let ran = 0;
    const again = await l.once('exec_1', 0, 2, 'push', async () => { ran++; return 'second'; }, { reconcile: async () => { ran++; return 'found'; } });
    assert.equal(again, 'first');
    assert.equal(ran, 0);
  });

  it('an intent without outcome (a crash) is reconciled with the world: what the reconcile finds is adopted, the effect does not run', async () => {
    const { repo, l } = ledger();
    await repo.put({ id: 'exec_1:0:push', executionId: 'exec_1', step: 0, attempt: 1, key: 'push', at: 'x', state: 'intent', effectId: 'eff_1', tries: 1, result: null });
    let ran = 0;
    const out = await l.once('exec_1', 0, 1, 'push', async () => { ran++; return 'again'; }, { reconcile: async () => 'the branch that exists' });
    assert.equal(out, 'the branch that exists');
    assert.equal(ran, 0);
    assert.equal(repo.get('exec_1:0:push')!.state, 'done');
    assert.equal(repo.get('exec_1:0:push')!.reconciled, true);
  });

  it('when the reconcile finds nothing the effect runs again under the same effect id', async () => {
    const { repo, l } = ledger();
    await repo.put({ id: 'exec_1:-1:callback', executionId: 'exec_1', step: -1, attempt: 1, key: 'callback', at: 'x', state: 'intent', effectId: 'eff_stable', tries: 1, result: null });
    const ids: string[] = [];
    await l.once('exec_1', -1, 1, 'callback', async ({ effectId, tries }) => { ids.push(`${effectId}/${tries}`); return 200; }, { reconcile: async () => undefined });
    assert.deepEqual(ids, ['eff_stable/2']);
  });

  it('a failed effect keeps its intent (whether it happened is unknown) and its worktree is released', async () => {
    const released: EffectResource[][] = [];
    const { repo, l } = ledger({ released });
    await assert.rejects(l.once('exec_1', 0, 1, 'push', async () => { throw new Error('git died'); }, { resources: [WT] }), /git died/);
    const rec = repo.get('exec_1:0:push')!;
    assert.equal(rec.state, 'intent');
    assert.match(rec.lastError!, /git died/);
    assert.deepEqual(released, [[WT]]);
    assert.deepEqual(rec.resources, []);
    // The retry asks the world first.
    let reconciled = false;
    assert.equal(await l.once('exec_1', 0, 2, 'push', async () => 'pushed', { reconcile: async () => { reconciled = true; return undefined; } }), 'pushed');
    assert.ok(reconciled);
  });

  it('the same effect asked twice at once runs once', async () => {
    const { l } = ledger();
    let ran = 0;
    const effect = async () => { ran++; await new Promise((r) => setTimeout(r, 10)); return ran; };
    const [a, b] = await Promise.all([l.once('e', 0, 1, 'k', effect), l.once('e', 0, 1, 'k', effect)]);
    assert.equal(ran, 1);
    assert.equal(a, b);
  });

  it('at start-up the worktrees of intents a crash left are released, once', async () => {
    const released: EffectResource[][] = [];
    const { repo, l } = ledger({ released });
    await repo.put({ id: 'e:0:push', executionId: 'e', step: 0, attempt: 1, key: 'push', at: 'x', state: 'intent', effectId: 'eff_1', tries: 1, resources: [WT], result: null });
    await repo.put({ id: 'e:1:push', executionId: 'e', step: 1, attempt: 1, key: 'push', at: 'x', state: 'done', resources: [], result: 1 });
    assert.equal(await l.releaseAbandoned(), 1);
    assert.deepEqual(released, [[WT]]);
    assert.equal(await l.releaseAbandoned(), 0, 'released once');
    assert.equal(repo.get('e:0:push')!.state, 'intent', 'the intent stays for the resumed step to reconcile');
  });

  it('records written before the intent protocol (no state) count as outcomes', async () => {
    const { repo, l } = ledger();
    await repo.put({ id: 'old:0:push', executionId: 'old', step: 0, attempt: 1, key: 'push', at: 'x', result: 'kept' });
    assert.equal(await l.once('old', 0, 1, 'push', async () => 'repeated'), 'kept');
  });
});

describe('start-up clean-up of interrupted effects', () => {
  it('resumeInFlight releases the worktrees named by intents and sweeps the repositories of interrupted executions before anything resumes', async () => {
    const store = new MemoryStore();
    const skill = testSkill({ agentId: 'coder-ai', action: 'refactor' });
    const h1 = await createHarness({ skills: [skill], store, yaml: 'defaults:\n  intelligence: ultra\n' });
    const rec = await h1.engine.executions.runAction('coder-ai', 'refactor', { source: '/work/repo' }, { keyId: null, callbackSecret: null });
    await settled(h1.engine, rec.id);
    await h1.close();
    await store.collection<SideEffectRecord>('sideEffects').put({ id: `${rec.id}:0:k`, executionId: rec.id, step: 0, attempt: 1, key: 'k', at: 'x', state: 'intent', effectId: 'eff_1', tries: 1, resources: [WT], result: null });
    // The execution was interrupted: put it back in flight as a crash would leave it.
    await store.collection<{ id: string; status: string }>('executions').update(rec.id, { status: 'in_progress' });
    const calls: string[] = [];
    const h2 = await createHarness({
      skills: [skill], store, yaml: 'defaults:\n  intelligence: ultra\n',
      effectResources: {
        release: async (r) => void calls.push(`release ${r.map((x) => x.path).join(',')}`),
        sweep: async (ws) => { calls.push(`sweep ${ws.join(',')}`); return 1; },
      },
    });
    await h2.engine.executions.resumeInFlight();
    assert.deepEqual(calls, ['release /tmp/cadre-wt-abc', 'sweep /work/repo']);
    await settled(h2.engine, rec.id);
    await h2.close();
  });
});

describe('callbacks through the ledger', () => {
  const secret = 'b'.repeat(64);

  it('carry a delivery id in X-Cadre-Delivery and Idempotency-Key and are signed with the owner key looked up after a restart, never the execution id', async () => {
    const store = new MemoryStore();
    const deliveries: Array<{ headers: Record<string, string>; body: string }> = [];
    const notifier = { deliver: async (_url: string, body: string, headers: Record<string, string>) => { deliveries.push({ headers, body }); return { status: 200 }; } };
    const h1 = await createHarness({ skills: [testSkill({ agentId: 'security-ai', action: 'scan' })], store, yaml: 'defaults:\n  intelligence: ultra\n' });
    // The first process accepts and finishes the task but dies before its callback (no notifier).
    const rec = await h1.engine.executions.submitTask({ task: 'x', capabilities: ['SECURE'], callbackUrl: 'https://example.test/hook' }, { keyId: 'key_1', callbackSecret: secret });
    await settled(h1.engine, rec.id);
    await h1.close();
    // The next one knows the key only through the lookup port.
    const lookups: string[] = [];
    const h2 = await createHarness({ skills: [], store, notifier, yaml: 'defaults:\n  intelligence: ultra\n', callbackSecret: (k) => { lookups.push(k); return k === 'key_1' ? secret : null; } });
    await h2.engine.executions.resumeInFlight();
    for (let i = 0; i < 200 && deliveries.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(deliveries.length, 1);
    const d = deliveries[0]!;
    assert.deepEqual(lookups, ['key_1']);
    assert.match(d.headers['x-cadre-delivery']!, /^eff_/);
    assert.equal(d.headers['idempotency-key'], d.headers['x-cadre-delivery']);
    assert.equal(d.headers['x-cadre-signature'], `sha256=${createHmac('sha256', secret).update(d.body).digest('hex')}`);
    assert.notEqual(d.headers['x-cadre-signature'], `sha256=${createHmac('sha256', rec.id).update(d.body).digest('hex')}`);
    await h2.close();
  });

  it('a task whose key is unknown after a restart sends no unsigned or execution-id-signed callback', async () => {
    const store = new MemoryStore();
    const deliveries: string[] = [];
    const notifier = { deliver: async (_u: string, body: string) => { deliveries.push(body); return { status: 200 }; } };
    const h1 = await createHarness({ skills: [testSkill({ agentId: 'security-ai', action: 'scan' })], store, yaml: 'defaults:\n  intelligence: ultra\n' });
    const rec = await h1.engine.executions.submitTask({ task: 'x', capabilities: ['SECURE'], callbackUrl: 'https://example.test/hook' }, { keyId: 'key_gone', callbackSecret: secret });
    await settled(h1.engine, rec.id);
    await h1.close();
    const logs: string[] = [];
    const h2 = await createHarness({ skills: [], store, notifier, yaml: 'defaults:\n  intelligence: ultra\n', log: (l) => logs.push(l) });
    await h2.engine.executions.resumeInFlight();
    for (let i = 0; i < 100 && !logs.some((l) => l.includes('not delivered')); i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(deliveries, []);
    assert.ok(logs.some((l) => /not delivered: the key that submitted the task is unknown/.test(l)), logs.join('\n'));
    await h2.close();
  });
});
