import { strict as assert } from 'node:assert';
import type { AcmfService } from '../../../server/src/engine/acmf/acmf-service';
import { Adaptations, tightened, type ApplyingEntry } from '../../../server/src/engine/governance/adaptations';
import { applyingFor, type Proposal } from '../../../server/src/skills/adapt/evaluate';
import { ManualClock } from '../../support/fakes';
import { MemoryStore } from '../../support/engine-harness';

/** The ACMF service as adaptations use it: mode changes and the approvals of an execution. */
function acmfFake(approved: Array<{ executionId: string; kind: string; by: string }> = []) {
  const modes: string[][] = [];
  const fake = {
    setMode: async (agentId: string, mode: string, by: string) => void modes.push([agentId, mode, by]),
    listApprovals: (f: { executionId: string }) => approved.filter((a) => a.executionId === f.executionId).map((a) => ({ action: { kind: a.kind }, decidedBy: a.by, status: 'approved' })),
  };
  return { acmf: fake as unknown as AcmfService, modes };
}

const entry = (over: Partial<ApplyingEntry>): ApplyingEntry => ({ id: 'x', kind: 'tune_agent', agentId: 'security-ai', change: 'c', effect: null, status: 'allowed', by: null, ...over });

describe('adaptations: what adapt-ai proposed and ACMF let through', () => {
  it('applies only what ACMF allowed, once per execution and proposal, naming who let it through', async () => {
    const { acmf } = acmfFake([{ executionId: 'act_1', kind: 'tune_agent', by: 'key:key_alice' }]);
    const a = new Adaptations({ store: new MemoryStore(), clock: new ManualClock(0), acmf, log: () => {} });
    const entries = [
      entry({ id: 'tune:security-ai:confidence', effect: { gate: 'confidence', threshold: 0.8 } }),
      entry({ id: 'suppress:fp1', kind: 'suppress_finding', effect: { fingerprint: 'fp1' }, status: 'denied' }),
      entry({ id: 'gone', effect: null, status: 'not_proposed' }),
    ];
    assert.deepEqual(a.thresholdFor('security-ai', 'confidence'), [], 'nothing adapted yet');
    const first = await a.applyFrom('act_1', 'tnt_default', entries);
    assert.deepEqual(first.map((r) => [r.proposalId, r.by]), [['tune:security-ai:confidence', 'approved by key:key_alice']]);
    assert.deepEqual(await a.applyFrom('act_1', 'tnt_default', entries), [], 'the same execution applies nothing twice');
    assert.deepEqual(a.thresholdFor('security-ai', 'confidence'), [0.8]);
    assert.deepEqual(a.suppressedFor('tnt_default', 'security-ai'), [], 'the denied suppression is not in force');
  });

  it("a tenant's suppressions stay its own; only the install tunes agents", async () => {
    const logs: string[] = [];
    const { acmf, modes } = acmfFake();
    const a = new Adaptations({ store: new MemoryStore(), clock: new ManualClock(0), acmf, log: (l) => void logs.push(l) });
    const applied = await a.applyFrom('act_b', 'tnt_b', [
      entry({ id: 'suppress:fp9', kind: 'suppress_finding', effect: { fingerprint: 'fp9' } }),
      entry({ id: 'tune:security-ai:mode', effect: { mode: 'OBSERVE' } }),
    ]);
    assert.deepEqual(applied.map((r) => r.proposalId), ['suppress:fp9']);
    assert.equal(modes.length, 0, "tenant B cannot lower an install agent's mode");
    assert.match(logs.join('\n'), /only the install tunes its agents/);
    assert.deepEqual(a.suppressedFor('tnt_b', 'security-ai'), ['fp9']);
    assert.deepEqual(a.suppressedFor('tnt_default', 'security-ai'), []);
    await a.applyFrom('act_i', 'tnt_default', [entry({ id: 'tune:security-ai:mode', effect: { mode: 'OBSERVE' } })]);
    assert.deepEqual(modes.map((m) => m.slice(0, 2)), [['security-ai', 'OBSERVE']]);
    assert.match(modes[0]![2], /adapt-ai \(act_i, allowed by adapt-ai's ACMF mode\)/);
  });

  it('an adapted threshold only tightens a gate', () => {
    assert.equal(tightened('min', 0.6, [0.8]), 0.8);
    assert.equal(tightened('min', 0.9, [0.8]), 0.9, 'a lower adapted minimum does not loosen');
    assert.equal(tightened('max', 20, [15, 18]), 15);
    assert.equal(tightened('max', 10, [15]), 10);
    assert.equal(tightened(null, null, [1]), null);
  });

  it('what ACMF decided per asked proposal: allowed or denied by kind, unknown ids named', () => {
    const p = (id: string, kind: Proposal['kind']): Proposal => ({ id, kind, agentId: 'security-ai', target: 't', change: `change ${id}`, why: 'w', evidence: {}, status: 'proposed', effect: kind === 'tune_agent' ? { gate: 'confidence', threshold: 0.7 } : { fingerprint: id } });
    const out = applyingFor([p('a', 'tune_agent'), p('b', 'suppress_finding')], ['a', 'b', 'zzz'], (k) => k === 'suppress_finding');
    assert.deepEqual(out.map((e) => [e.id, e.status]), [['a', 'denied'], ['b', 'allowed'], ['zzz', 'not_proposed']]);
    assert.equal(out[2]!.change, 'no such proposal now');
  });
});
