/**
 * The contract's webhook event catalog ("Events" > "Webhook event names") as data. Both catalogs of
 * the contract (the agent platform's and the projects surface's) share ONE subscription space: a
 * subscription's `events` may name any event below, and `security.vulnerability_fixed`, which both
 * catalogs list, is one event (docs/decisions.md, "Outbound webhooks: one subscription space").
 *
 * `emittedBy` says which operation publishes the event on the bus topic `service.event`; an event
 * whose producer is not built yet says so (`pending`) instead of being faked. docs/api.md has the
 * same table with the data shapes.
 */

export type WebhookEventGroup = 'Code' | 'Deployment' | 'Security' | 'System' | 'Prediction' | 'Remediation' | 'Performance';

/** Which of the contract's two catalogs lists the event (`both`: security.vulnerability_fixed). */
export type WebhookEventSurface = 'agents' | 'projects' | 'both';

export interface WebhookEventDef {
  name: string;
  group: WebhookEventGroup;
  surface: WebhookEventSurface;
  /** The operation that publishes it. */
  emittedBy: string;
  /** True while its producer is not built (documented, never faked). */
  pending?: true;
}

export const WEBHOOK_EVENTS: readonly WebhookEventDef[] = Object.freeze([
  { name: 'code.generated', group: 'Code', surface: 'agents', emittedBy: "coder-ai's step whose artifact passes Review" },
  { name: 'code.reviewed', group: 'Code', surface: 'agents', emittedBy: 'review-ai step completion' },
  { name: 'code.merged', group: 'Code', surface: 'agents', emittedBy: 'the source-hosting pull-request flow: a pull request Cadre opened was merged' },
  { name: 'deployment.started', group: 'Deployment', surface: 'agents', emittedBy: "deploy-ai's deploy action starting" },
  { name: 'deployment.completed', group: 'Deployment', surface: 'agents', emittedBy: "deploy-ai's deploy action succeeding" },
  { name: 'deployment.failed', group: 'Deployment', surface: 'agents', emittedBy: "deploy-ai's deploy action failing" },
  { name: 'deployment.rollback', group: 'Deployment', surface: 'agents', emittedBy: "deploy-ai's rollback action, or a deploy that rolled back" },
  { name: 'security.vulnerability_detected', group: 'Security', surface: 'agents', emittedBy: 'a security scan finding a new finding at or above webhooks.severity_threshold' },
  { name: 'security.vulnerability_fixed', group: 'Security', surface: 'both', emittedBy: 'a security scan no longer finding a previously reported fingerprint' },
  { name: 'security.compliance_check', group: 'Security', surface: 'agents', emittedBy: "govern-ai's compliance results (emitted when govern-ai lands)", pending: true },
  { name: 'system.anomaly_detected', group: 'System', surface: 'agents', emittedBy: "observe-ai's anomalies on system metrics" },
  { name: 'system.self_healing_triggered', group: 'System', surface: 'agents', emittedBy: "maintain-ai's fix completed in AUTONOMOUS mode (a repair no person had to approve)" },
  { name: 'system.performance_alert', group: 'System', surface: 'agents', emittedBy: "observe-ai's firing alert rules" },
  { name: 'prediction.created', group: 'Prediction', surface: 'projects', emittedBy: 'a prediction stored for a project' },
  { name: 'prediction.updated', group: 'Prediction', surface: 'projects', emittedBy: 'a stored prediction changed' },
  { name: 'prediction.resolved', group: 'Prediction', surface: 'projects', emittedBy: 'a prediction resolved (remediated or no longer predicted)' },
  { name: 'remediation.started', group: 'Remediation', surface: 'projects', emittedBy: 'POST /v1/predictions/{id}/remediate starting' },
  { name: 'remediation.completed', group: 'Remediation', surface: 'projects', emittedBy: 'a remediation whose steps all completed' },
  { name: 'remediation.failed', group: 'Remediation', surface: 'projects', emittedBy: 'a remediation with a failed step' },
  { name: 'security.vulnerability_found', group: 'Security', surface: 'projects', emittedBy: 'the same new finding as security.vulnerability_detected (projects-surface name)' },
  { name: 'performance.anomaly_detected', group: 'Performance', surface: 'projects', emittedBy: "observe-ai's anomalies on latency/throughput metrics" },
  { name: 'performance.optimization_applied', group: 'Performance', surface: 'projects', emittedBy: 'an applied optimization (emitted when one is applied: optimize-ai only analyzes and benchmarks today)', pending: true },
] satisfies WebhookEventDef[]);

export const WEBHOOK_EVENT_NAMES: readonly string[] = Object.freeze(WEBHOOK_EVENTS.map((e) => e.name));

/**
 * A test delivery's event (POST /v1/webhooks/{id}/test). Not subscribable: it goes to the one
 * subscription tested, whatever its `events`.
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

const NAMES = new Set(WEBHOOK_EVENT_NAMES);

export function isWebhookEvent(name: string): boolean {
  return NAMES.has(name);
}
