import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { DurableSideEffectLedger } from '../../../server/src/engine/executions/side-effect-ledger';
import type { SideEffectRecord } from '../../../server/src/engine/executions/records';
import type { Evidence, SkillContext, StepRequest } from '../../../server/src/engine/rigor/skill';
import { AgentWorkers } from '../../../server/src/workers/agent-workers';
import { MemoryRepository } from '../../support/fakes';

const ROOT = path.resolve(__dirname, '../../..');
const MODULE = path.join(__dirname, 'reconcile-skills.cjs');
const EVIDENCE: Evidence = { items: [{ source: 'test', detail: 'x', weight: 1 }], constraints: [], pathsRead: [] };

function request(over: Partial<StepRequest> = {}): StepRequest {
  return { executionId: 'exec_fx', step: 1, agentId: 'fx-ai', action: 'push', goal: { id: 'g', prompt: 'push' }, input: {}, scope: 'mvp', tier: 'core', previous: [], ...over };
}

describe('ctx.once across the worker boundary: reconcile and resources', function () {
  this.timeout(60_000);
  let workers: AgentWorkers;
  const repo = new MemoryRepository<SideEffectRecord>();
  const ledger = new DurableSideEffectLedger({ repo, clock: { now: () => 0 }, newId: (p) => `${p}_1`, log: () => {} });
  const context = (req: StepRequest): SkillContext => {
    const signal = new AbortController().signal;
    return { request: { ...req, signal }, signal, progress: () => {}, allowed: () => false, once: (key, effect, opts) => ledger.once(req.executionId, req.step, req.attempt ?? 1, key, effect, opts) };
  };

  before(() => {
    workers = new AgentWorkers({ workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'), execArgv: ['--require', require.resolve('tsx/cjs')], modules: [MODULE], log: () => {} });
  });
  after(async () => workers.close());

  it('the resources a skill names in its worker reach the intent before the effect runs in the worker', async () => {
    const skill = (await workers.allSkills()).find((s) => s.agentId === 'fx-ai')!;
    const req = request({ executionId: 'exec_fx1' });
    const data = (await skill.generate(context(req), EVIDENCE)).data as { out: { by: string; thread: number }; effects: number; reconciles: number };
    assert.equal(data.out.by, 'effect');
    assert.notEqual(data.out.thread, 0, 'the effect ran in the worker');
    assert.equal(data.reconciles, 0, 'no reconcile without an earlier intent');
    const rec = repo.get('exec_fx1:1:push')!;
    assert.equal(rec.state, 'done');
    assert.equal(rec.tries, 1);
  });

  it('an intent left by a crash: the worker runs the reconcile, what it finds is the outcome, the effect does not run', async () => {
    const skill = (await workers.allSkills()).find((s) => s.agentId === 'fx-ai')!;
    await repo.put({ id: 'exec_fx2:1:push', executionId: 'exec_fx2', step: 1, attempt: 1, key: 'push', at: 'x', state: 'intent', effectId: 'eff_x', tries: 1, result: null });
    const req = request({ executionId: 'exec_fx2', input: { found: 'cadre/fx-s1-push' } });
    const data = (await skill.generate(context(req), EVIDENCE)).data as { out: { by: string; thread: number; found: string }; effects: number; reconciles: number };
    assert.equal(data.out.by, 'reconcile');
    assert.notEqual(data.out.thread, 0, 'the reconcile ran in the worker');
    assert.equal(data.out.found, 'cadre/fx-s1-push');
    assert.equal(data.effects, 1, 'the effect did not run again (one from the first test)');
    assert.equal(repo.get('exec_fx2:1:push')!.reconciled, true);
  });

  it('an intent left by a crash whose reconcile finds nothing: the effect runs again, with the resources in the new intent', async () => {
    const skill = (await workers.allSkills()).find((s) => s.agentId === 'fx-ai')!;
    await repo.put({ id: 'exec_fx3:1:push', executionId: 'exec_fx3', step: 1, attempt: 1, key: 'push', at: 'x', state: 'intent', effectId: 'eff_y', tries: 1, result: null });
    let intentResources: unknown;
    const put = repo.put.bind(repo);
    repo.put = (r) => { if (r.id === 'exec_fx3:1:push' && r.state === 'intent') intentResources = r.resources; return put(r); };
    const data = (await skill.generate(context(request({ executionId: 'exec_fx3' })), EVIDENCE)).data as { out: { by: string }; reconciles: number };
    repo.put = put;
    assert.equal(data.out.by, 'effect');
    assert.deepEqual(intentResources, [{ kind: 'worktree', repo: '/repo', path: '/tmp/cadre-wt-fixture' }]);
    assert.equal(repo.get('exec_fx3:1:push')!.effectId, 'eff_y', 'same effect id');
    assert.equal(repo.get('exec_fx3:1:push')!.tries, 2);
  });
});
