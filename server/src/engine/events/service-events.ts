/**
 * The one place where engine facts become the contract's webhook events (catalog/webhook-events.ts),
 * published on the bus topic `service.event`. Fed by the execution service when a step starts and
 * when it ends (after its checkpoint is durable); reads only the step's record and its artifact data
 * (plain JSON the skills produce), so it needs no skill module.
 *
 * | event                                        | fact                                                                 |
 * |----------------------------------------------|----------------------------------------------------------------------|
 * | code.generated                               | a coder-ai step completed and passed Review                          |
 * | code.reviewed                                | a review-ai step ended with a review (passed or not)                 |
 * | deployment.started                           | a deploy-ai `deploy` step started                                    |
 * | deployment.completed / deployment.failed     | that step ended: completed and passed / anything else                |
 * | deployment.rollback                          | the deploy ran but its health check failed: the rollback deploy-ai names |
 * | security.vulnerability_detected (+ _found)   | a security-ai finding at or above the threshold not reported before for the same scan scope |
 * | security.vulnerability_fixed                 | a reported fingerprint absent from a later scan of the same scope    |
 * | system.anomaly_detected / performance.anomaly_detected | observe-ai `analyze` anomalies (latency kinds are performance) |
 * | system.performance_alert                     | observe-ai `alerts` episodes firing                                  |
 * | system.self_healing_triggered                | a maintain-ai `fix` step completed in AUTONOMOUS mode (nobody had to approve the repair) |
 *
 * Known fingerprints are kept per scan scope (workspace, action, tier, files asked for) in the store
 * collection `reportedFindings`, so "new" and "fixed" hold across restarts.
 */
import { createHash } from 'node:crypto';
import type { MessageBus, ServiceEvent } from '../bus';
import type { Clock, CollectionStore, Repository } from '../ports';
import type { ExecutionRecord, StepRecord } from '../executions/records';
import type { StepResult } from '../rigor/pipeline';

export const SEVERITY_ORDER = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type FindingSeverity = (typeof SEVERITY_ORDER)[number];

export const REPORTED_FINDINGS_COLLECTION = 'reportedFindings';
/** Fingerprints remembered per scan scope (the oldest leave first). */
const MAX_FINGERPRINTS_PER_SCOPE = 10_000;
/** Events of one kind published per step at most (anomalies, alerts, findings); the rest are counted in the last one. */
export const MAX_EVENTS_PER_STEP = 50;

interface ReportedFinding { ruleId: string; severity: string; file: string; line: number | null; reportedAt: string }

export interface ReportedFindingsRecord {
  /** `scope_<sha256 of the scope key>`. */
  id: string;
  scope: { workspace: string | null; action: string; tier: string; files: string[] | null };
  fingerprints: Record<string, ReportedFinding>;
  updatedAt: string;
}

/** What the execution service tells this module about steps. */
export interface StepObserver {
  stepStarted(rec: ExecutionRecord, step: StepRecord): void;
  stepEnded(rec: ExecutionRecord, step: StepRecord, result: StepResult | null): Promise<void>;
}

export interface ServiceEventsDeps {
  bus: MessageBus;
  store: CollectionStore;
  clock: Clock;
  /** Findings below it do not make security events (config webhooks.severity_threshold). */
  severityThreshold: () => FindingSeverity;
  log(line: string): void;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function severityAtLeast(s: string, threshold: FindingSeverity): boolean {
  const i = SEVERITY_ORDER.indexOf(s as FindingSeverity);
  return i >= 0 && i >= SEVERITY_ORDER.indexOf(threshold);
}

/** Latency-type anomalies are performance events; the rest are system events. */
export function isPerformanceAnomaly(a: Obj): boolean {
  if (a['kind'] === 'slo-burn-latency') return true;
  if (isObj(a['magnitude']) && typeof a['magnitude']['p95Ms'] === 'number') return true;
  return /latency|duration|response_?time|p9\d|throughput|req(uest)?s?_per|rps/i.test(`${str(a['name']) ?? ''} ${str(a['series']) ?? ''}`);
}

export class ServiceEvents implements StepObserver {
  private readonly reported: Repository<ReportedFindingsRecord>;

  constructor(private readonly deps: ServiceEventsDeps) {
    this.reported = deps.store.collection<ReportedFindingsRecord>(REPORTED_FINDINGS_COLLECTION);
  }

  stepStarted(rec: ExecutionRecord, step: StepRecord): void {
    if (step.agentId === 'deploy-ai' && step.action === 'deploy') {
      const environment = str(rec.request.input['environment']) ?? 'staging';
      this.publish(rec, 'deployment.started', { ...this.base(rec, step), environment });
    }
  }

  async stepEnded(rec: ExecutionRecord, step: StepRecord, result: StepResult | null): Promise<void> {
    try {
      await this.derive(rec, step, result);
    } catch (err) {
      // An event that cannot be derived must not fail the execution that caused it.
      this.deps.log(`service events of ${rec.id} step ${step.step} not published: ${(err as Error).message}`);
    }
  }

  private async derive(rec: ExecutionRecord, step: StepRecord, result: StepResult | null): Promise<void> {
    const artifact = result?.artifact ?? null;
    const data = artifact?.data;
    const completed = result?.outcome === 'completed';
    const base = this.base(rec, step, result);
    switch (step.agentId) {
      case 'coder-ai':
        if (completed && result!.passed && artifact && isObj(data)) {
          this.publish(rec, 'code.generated', {
            ...base, summary: artifact.summary, mode: data['mode'] ?? null, branch: data['branch'] ?? null, commit: data['commit'] ?? null, base_commit: data['base'] ?? null,
            files: arr(data['files']).map((f) => (isObj(f) ? f['path'] : f)).filter((p) => typeof p === 'string'),
          });
        }
        return;
      case 'review-ai':
        if (artifact && artifact.kind === 'review' && (result!.outcome === 'completed' || result!.outcome === 'failed') && isObj(data)) {
          const findings = arr(data['findings']).filter(isObj);
          const bySeverity: Record<string, number> = {};
          for (const f of findings) bySeverity[String(f['severity'])] = (bySeverity[String(f['severity'])] ?? 0) + 1;
          this.publish(rec, 'code.reviewed', {
            ...base, passed: result!.passed, summary: artifact.summary, findings: findings.length, by_severity: bySeverity,
            branch: data['branch'] ?? null, commit: data['commit'] ?? null, gates_failed: result!.gates.filter((g) => g.status === 'fail').map((g) => g.gate),
          });
        }
        return;
      case 'deploy-ai':
        if (step.action === 'deploy' && result) this.deployEnded(rec, base, result, data);
        return;
      case 'security-ai':
        if (artifact && artifact.kind === 'security-findings' && isObj(data) && Array.isArray(data['findings']) && result!.outcome !== 'error') {
          await this.securityScan(rec, step, base, data);
        }
        return;
      case 'maintain-ai':
        if (step.action === 'fix' && completed && result!.acmfMode === 'AUTONOMOUS' && artifact) {
          const d = isObj(data) ? data : {};
          this.publish(rec, 'system.self_healing_triggered', { ...base, summary: artifact.summary, branch: d['branch'] ?? null, commit: d['commit'] ?? null });
        }
        return;
      case 'observe-ai':
        if (isObj(data) && completed) this.observe(rec, step, base, data);
        return;
      default:
        return;
    }
  }

  private deployEnded(rec: ExecutionRecord, base: Obj, result: StepResult, data: unknown): void {
    const d = isObj(data) ? data : {};
    const run = isObj(d['run']) ? d['run'] : null;
    const health = isObj(d['health']) ? d['health'] : null;
    const environment = str(d['environment']) ?? str(rec.request.input['environment']) ?? 'staging';
    const facts = {
      ...base, environment, production: d['production'] ?? false, commit: run?.['commit'] ?? null, exit_code: run?.['exitCode'] ?? null,
      duration_ms: run?.['durationMs'] ?? null, health: health ? { checked: health['checked'], ok: health['ok'], status: health['status'] } : null,
    };
    if (result.outcome === 'completed' && result.passed) {
      this.publish(rec, 'deployment.completed', facts);
      return;
    }
    this.publish(rec, 'deployment.failed', { ...facts, reason: result.reason ?? result.error?.message ?? 'the deploy did not pass' });
    // The command ran and the service is unhealthy: deploy-ai names the rollback (it does not run it itself).
    const rollback = isObj(d['rollback']) ? d['rollback'] : null;
    if (run && run['exitCode'] === 0 && health?.['checked'] === true && health['ok'] === false && rollback?.['kind'] === 'revert') {
      this.publish(rec, 'deployment.rollback', { ...facts, rollback: { kind: rollback['kind'], ref: rollback['ref'], basis: rollback['basis'] ?? null }, performed: false });
    }
  }

  private async securityScan(rec: ExecutionRecord, step: StepRecord, base: Obj, data: Obj): Promise<void> {
    const threshold = this.deps.severityThreshold();
    const files = Array.isArray(rec.request.input['files']) ? (rec.request.input['files'] as unknown[]).filter((f): f is string => typeof f === 'string').sort() : null;
    const scope = { workspace: rec.request.source ?? null, action: step.action, tier: rec.request.intelligence, files };
    const id = `scope_${createHash('sha256').update(JSON.stringify(scope)).digest('hex').slice(0, 32)}`;
    const known = this.reported.get(id);
    const now = new Date(this.deps.clock.now()).toISOString();
    const current = new Map<string, Obj>();
    for (const f of arr(data['findings'])) {
      if (isObj(f) && typeof f['fingerprint'] === 'string' && typeof f['severity'] === 'string' && severityAtLeast(f['severity'], threshold)) current.set(f['fingerprint'], f);
    }
    const fingerprints: Record<string, ReportedFinding> = { ...(known?.fingerprints ?? {}) };
    const fresh = [...current.entries()].filter(([fp]) => !(fp in fingerprints));
    const gone = Object.entries(fingerprints).filter(([fp]) => !current.has(fp));
    for (const [fp, f] of fresh) {
      const range = isObj(f['range']) ? f['range'] : {};
      fingerprints[fp] = { ruleId: String(f['ruleId'] ?? ''), severity: String(f['severity']), file: String(f['file'] ?? ''), line: typeof range['startLine'] === 'number' ? range['startLine'] : null, reportedAt: now };
    }
    for (const [fp] of gone) delete fingerprints[fp];
    const keys = Object.keys(fingerprints);
    for (const fp of keys.slice(0, Math.max(0, keys.length - MAX_FINGERPRINTS_PER_SCOPE))) delete fingerprints[fp];
    // Durable before publishing: a restart does not report the same finding twice.
    if (fresh.length > 0 || gone.length > 0 || !known) await this.reported.put({ id, scope, fingerprints, updatedAt: now });
    const finding = (fp: string, f: ReportedFinding) => ({ fingerprint: fp, rule_id: f.ruleId, severity: f.severity, file: f.file, line: f.line });
    for (const [fp] of fresh.slice(0, MAX_EVENTS_PER_STEP)) {
      const payload = { ...base, scope: step.action, threshold, finding: { ...finding(fp, fingerprints[fp]!), message: String(current.get(fp)!['message'] ?? '') } };
      this.publish(rec, 'security.vulnerability_detected', payload);
      this.publish(rec, 'security.vulnerability_found', payload);
    }
    if (fresh.length > MAX_EVENTS_PER_STEP) this.deps.log(`security events of ${rec.id}: ${fresh.length - MAX_EVENTS_PER_STEP} new finding(s) beyond ${MAX_EVENTS_PER_STEP} not published one by one`);
    for (const [fp, f] of gone.slice(0, MAX_EVENTS_PER_STEP)) {
      this.publish(rec, 'security.vulnerability_fixed', { ...base, scope: step.action, finding: { ...finding(fp, f), reported_at: f.reportedAt } });
    }
  }

  private observe(rec: ExecutionRecord, step: StepRecord, base: Obj, data: Obj): void {
    if (step.action === 'analyze') {
      const anomalies = arr(data['anomalies']).filter(isObj).slice(0, MAX_EVENTS_PER_STEP);
      for (const a of anomalies) {
        const anomaly = { kind: a['kind'], series: a['series'], name: a['name'], labels: a['labels'], start: a['start'], end: a['end'], value: a['value'], baseline: a['baseline'], severity: a['severity'], method: a['method'], file: a['file'] };
        this.publish(rec, isPerformanceAnomaly(a) ? 'performance.anomaly_detected' : 'system.anomaly_detected', { ...base, anomaly });
      }
    } else if (step.action === 'alerts') {
      let n = 0;
      for (const rule of arr(data['rules']).filter(isObj)) {
        for (const e of arr(rule['episodes']).filter(isObj)) {
          if (e['state'] !== 'firing' || n++ >= MAX_EVENTS_PER_STEP) continue;
          this.publish(rec, 'system.performance_alert', {
            ...base, alert: { rule: e['rule'], severity: e['severity'], series: e['series'], condition: rule['condition'] ?? null, since: e['since'], fired_at: e['firedAt'], points: e['pointCount'] },
          });
        }
      }
    }
  }

  private base(rec: ExecutionRecord, step: StepRecord, result?: StepResult | null): Obj {
    return { execution_id: rec.id, agent_id: step.agentId, action: step.action, step: step.step, ...(result ? { confidence: result.confidence } : {}) };
  }

  private publish(rec: ExecutionRecord, event: string, data: Obj): void {
    const e: ServiceEvent = { event, data, executionId: rec.id, occurredAt: new Date(this.deps.clock.now()).toISOString() };
    this.deps.bus.publish('service.event', e);
  }
}
