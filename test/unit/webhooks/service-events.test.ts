import assert from 'node:assert/strict';
import { MessageBus, type ServiceEvent } from '../../../server/src/engine/bus';
import { isPerformanceAnomaly, ServiceEvents } from '../../../server/src/engine/events/service-events';
import type { ExecutionRecord, StepRecord } from '../../../server/src/engine/executions/records';
import type { StepResult } from '../../../server/src/engine/rigor/pipeline';
import { ManualClock, MemoryRepository } from '../../support/fakes';

function setup(threshold: 'high' | 'medium' = 'high') {
  const bus = new MessageBus();
  const got: ServiceEvent[] = [];
  bus.subscribe('service.event', (e) => void got.push(e));
  const repos = new Map<string, MemoryRepository<{ id: string }>>();
  const store = { collection: (name: string) => repos.get(name) ?? repos.set(name, new MemoryRepository()).get(name)! } as never;
  const ev = new ServiceEvents({ bus, store, clock: new ManualClock(), severityThreshold: () => threshold, log: () => undefined });
  return { ev, got, names: () => got.map((e) => e.event) };
}

const rec = (input: Record<string, unknown> = {}): ExecutionRecord => ({ id: 'task_1', request: { source: '/ws', intelligence: 'core', input, prompt: '', capabilities: [] } } as unknown as ExecutionRecord);
const step = (agentId: string, action: string): StepRecord => ({ step: 0, agentId, action } as StepRecord);
const result = (o: Partial<StepResult> & { kind?: string; data?: unknown }): StepResult => ({
  outcome: 'completed', passed: true, confidence: 0.9, reason: null, gates: [], error: null,
  artifact: o.kind ? { kind: o.kind, summary: 's', goalRef: 'g', confidence: 0.9, data: o.data } : null, ...o,
} as unknown as StepResult);

const finding = (fp: string, severity: string) => ({ fingerprint: fp, severity, ruleId: 'aws-access-key', file: 'src/a.ts', message: 'AWS key', range: { startLine: 3 } });

describe('service events (engine facts → webhook events)', () => {
  it('security-ai: one detected (+found) per new finding at or above the threshold; fixed when a reported one is gone', async () => {
    const { ev, got, names } = setup('high');
    const s = step('security-ai', 'scan');
    await ev.stepEnded(rec(), s, result({ kind: 'security-findings', data: { findings: [finding('fp1', 'critical'), finding('fp2', 'medium'), finding('fp3', 'high')] } }));
    assert.deepEqual(names().sort(), ['security.vulnerability_detected', 'security.vulnerability_detected', 'security.vulnerability_found', 'security.vulnerability_found']);
    assert.deepEqual(got.filter((e) => e.event === 'security.vulnerability_detected').map((e) => (e.data['finding'] as { fingerprint: string }).fingerprint).sort(), ['fp1', 'fp3']);
    got.length = 0;
    // The same scan again: nothing new.
    await ev.stepEnded(rec(), s, result({ kind: 'security-findings', data: { findings: [finding('fp1', 'critical'), finding('fp3', 'high')] } }));
    assert.deepEqual(names(), []);
    // fp1 fixed, fp4 new.
    await ev.stepEnded(rec(), s, result({ kind: 'security-findings', data: { findings: [finding('fp3', 'high'), finding('fp4', 'high')] } }));
    assert.deepEqual(names().sort(), ['security.vulnerability_detected', 'security.vulnerability_fixed', 'security.vulnerability_found']);
    assert.equal((got.find((e) => e.event === 'security.vulnerability_fixed')!.data['finding'] as { fingerprint: string }).fingerprint, 'fp1');
    got.length = 0;
    // A scan of another scope (named files) does not "fix" what the whole-tree scan reported.
    await ev.stepEnded(rec({ files: ['src/b.ts'] }), s, result({ kind: 'security-findings', data: { findings: [] } }));
    assert.deepEqual(names(), []);
  });

  it('code.generated only when coder-ai passed; code.reviewed for a review that passed or failed', async () => {
    const { ev, names } = setup();
    await ev.stepEnded(rec(), step('coder-ai', 'generate'), result({ kind: 'code', passed: false, outcome: 'failed', data: { files: [] } }));
    assert.deepEqual(names(), []);
    await ev.stepEnded(rec(), step('coder-ai', 'generate'), result({ kind: 'code', data: { files: [{ path: 'a.ts' }], branch: 'cadre/x', commit: 'abc' } }));
    await ev.stepEnded(rec(), step('review-ai', 'review'), result({ kind: 'review', passed: false, outcome: 'failed', data: { findings: [{ severity: 'high' }] } }));
    await ev.stepEnded(rec(), step('review-ai', 'review'), result({ kind: 'review', outcome: 'not_applicable', data: { findings: [] } }));
    assert.deepEqual(names(), ['code.generated', 'code.reviewed']);
  });

  it('deploy-ai deploy: started, then completed or failed, and rollback when the health check failed after a run', async () => {
    const { ev, got, names } = setup();
    ev.stepStarted(rec({ environment: 'staging' }), step('deploy-ai', 'deploy'));
    await ev.stepEnded(rec(), step('deploy-ai', 'deploy'), result({ kind: 'deployment', data: { environment: 'staging', run: { exitCode: 0 }, health: { checked: true, ok: true, status: 200 } } }));
    await ev.stepEnded(rec(), step('deploy-ai', 'deploy'), result({
      kind: 'deployment', outcome: 'failed', passed: false, reason: 'health check failed',
      data: { environment: 'staging', run: { exitCode: 0 }, health: { checked: true, ok: false, status: 503 }, rollback: { kind: 'revert', ref: 'abc123', basis: 'parent' } },
    }));
    assert.deepEqual(names(), ['deployment.started', 'deployment.completed', 'deployment.failed', 'deployment.rollback']);
    assert.deepEqual(got.at(-1)!.data['rollback'], { kind: 'revert', ref: 'abc123', basis: 'parent' });
    assert.equal(got.at(-1)!.data['performed'], false);
  });

  it('observe-ai: anomalies split into system/performance, firing alert episodes become performance alerts', async () => {
    const { ev, names } = setup();
    await ev.stepEnded(rec(), step('observe-ai', 'analyze'), result({ kind: 'observation', data: { anomalies: [
      { kind: 'spike', name: 'cpu_usage', series: 'cpu_usage{host="a"}', severity: 'high' },
      { kind: 'slo-burn-latency', name: 'http', series: 'http', severity: 'critical' },
      { kind: 'level-shift', name: 'http_request_duration_seconds', series: 'x', severity: 'medium' },
    ] } }));
    await ev.stepEnded(rec(), step('observe-ai', 'alerts'), result({ kind: 'alerts', data: { rules: [{ condition: 'cpu > 90', episodes: [{ state: 'firing', rule: 'HighCpu' }, { state: 'resolved', rule: 'HighCpu' }] }] } }));
    assert.deepEqual(names(), ['system.anomaly_detected', 'performance.anomaly_detected', 'performance.anomaly_detected', 'system.performance_alert']);
    assert.equal(isPerformanceAnomaly({ kind: 'dip', name: 'requests_per_second' }), true);
    assert.equal(isPerformanceAnomaly({ kind: 'dip', name: 'disk_free_bytes' }), false);
  });

  it('maintain-ai fix in AUTONOMOUS mode is a self-healing trigger; under ASSISTED it is not', async () => {
    const { ev, names } = setup();
    await ev.stepEnded(rec(), step('maintain-ai', 'fix'), result({ kind: 'code', acmfMode: 'ASSISTED', data: {} }));
    await ev.stepEnded(rec(), step('maintain-ai', 'fix'), result({ kind: 'code', acmfMode: 'AUTONOMOUS', data: { branch: 'cadre/fix' } }));
    assert.deepEqual(names(), ['system.self_healing_triggered']);
  });
});
