/**
 * Inbound third-party events, after the door verified their signature: PagerDuty v3 incident
 * events and Jira issue / sprint events. The door calls `receive` and answers 200 at once; the
 * delivery is recorded durably first (its id: a replay is answered 200 and processed once), its
 * payload kept until processed, so a restart processes what a stop left pending.
 *
 *  - incident.triggered / acknowledged / resolved update the incident record; the first time an
 *    incident is resolved, `incident.resolution.completed` is published on the bus (once per
 *    incident, whatever replays or re-resolutions follow) and written to the audit trail.
 *  - jira:issue_created / jira:issue_updated update the issue record; a created issue of a project
 *    that `integrations.tracker.projects.mapping` maps starts a task (once per issue) through the
 *    ordinary task path. sprint_started / sprint_closed (Jira sends them unprefixed; the prefixed
 *    jira:sprint_started / jira:sprint_closed are accepted alike) update the sprint record.
 */
import type { MessageBus } from '../bus';
import { CAPABILITIES, type Capability } from '../catalog/enums';
import { TASK_VERBS, type TaskVerb } from '../catalog/verbs';
import type { EngineError } from '../errors';
import type { ExecutionService } from '../executions/execution-service';
import type { AuditTrail, Clock, CollectionStore, Repository } from '../ports';
import {
  INCIDENT_COLLECTIONS, type InboundDeliveryRecord, type IncidentRecord, type IncidentStatus, type TrackerIssueRecord, type TrackerItemRecord, type TrackerSprintRecord,
} from './records';

/** Delivery ids kept for the dedupe (the oldest processed ones leave first). */
export const MAX_DELIVERIES = 10_000;
const PRUNE_EVERY = 100;

export const INBOUND_PROVIDERS = ['pagerduty', 'jira'] as const;
export type InboundProvider = (typeof INBOUND_PROVIDERS)[number];

export const PAGERDUTY_EVENTS = ['incident.triggered', 'incident.acknowledged', 'incident.resolved'] as const;
/** Jira's names as sent (issue events prefixed with `jira:`, sprint events bare) and the prefixed sprint form. */
export const JIRA_EVENTS = ['jira:issue_created', 'jira:issue_updated', 'sprint_started', 'sprint_closed', 'jira:sprint_started', 'jira:sprint_closed'] as const;

/** A tracker mapping value: `CAPABILITY` or `CAPABILITY verb` (e.g. `OPERATE incident`, `BUILD`). */
export function parseMapping(value: string): { capability: Capability; verb?: TaskVerb } | { error: string } {
  const [cap, verb, ...rest] = value.trim().split(/\s+/);
  const capability = (cap ?? '').toUpperCase();
  if (!(CAPABILITIES as readonly string[]).includes(capability)) return { error: `"${value}": ${cap} is not a capability (${CAPABILITIES.join(', ')})` };
  if (rest.length) return { error: `"${value}": give CAPABILITY or CAPABILITY verb` };
  if (verb === undefined) return { capability: capability as Capability };
  if (!(TASK_VERBS as readonly string[]).includes(verb)) return { error: `"${value}": ${verb} is not a task verb (${TASK_VERBS.join(', ')})` };
  return { capability: capability as Capability, verb: verb as TaskVerb };
}

export interface InboundServiceDeps {
  store: CollectionStore;
  bus: MessageBus;
  executions: ExecutionService;
  audit: AuditTrail;
  clock: Clock;
  /** `integrations.tracker.projects.mapping`: tracker project key → `CAPABILITY [verb]`. */
  trackerMapping(): Record<string, string>;
  log(line: string): void;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null);

export class InboundService {
  private readonly deliveries: Repository<InboundDeliveryRecord>;
  private readonly incidents: Repository<IncidentRecord>;
  private readonly tracker: Repository<TrackerItemRecord>;
  private inserts = 0;
  private readonly running = new Set<Promise<unknown>>();
  /** Deliveries are applied one at a time, in arrival order (an incident's resolve after its trigger). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: InboundServiceDeps) {
    this.deliveries = deps.store.collection<InboundDeliveryRecord>(INCIDENT_COLLECTIONS.deliveries);
    this.incidents = deps.store.collection<IncidentRecord>(INCIDENT_COLLECTIONS.incidents);
    this.tracker = deps.store.collection<TrackerItemRecord>(INCIDENT_COLLECTIONS.trackerItems);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /**
   * Records the delivery (durably) and processes it in the background. `duplicate`: this delivery id
   * was received before; nothing is done again.
   */
  async receive(provider: InboundProvider, deliveryId: string, event: string, payload: unknown): Promise<'accepted' | 'duplicate'> {
    const id = `${provider}:${deliveryId}`;
    if (this.deliveries.get(id)) return 'duplicate';
    const rec: InboundDeliveryRecord = { id, provider, deliveryId, receivedAt: this.now(), status: 'pending', event, note: null, payload };
    await this.deliveries.put(rec);
    if (++this.inserts % PRUNE_EVERY === 0) await this.prune();
    this.schedule(id);
    return 'accepted';
  }

  private schedule(id: string): void {
    const p = (this.queue = this.queue.then(() => this.process(id)).catch((err: unknown) => this.deps.log(`inbound delivery ${id} failed: ${(err as Error).message}`)));
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Processes the deliveries a stopped server left pending (called once at start). */
  resumePending(): number {
    const pending = this.deliveries.list((d) => d.status === 'pending').sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : 1));
    for (const d of pending) this.schedule(d.id);
    return pending.length;
  }

  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  private async process(id: string): Promise<void> {
    const d = this.deliveries.get(id);
    if (!d || d.status !== 'pending') return;
    let outcome: { status: InboundDeliveryRecord['status']; note: string | null };
    try {
      outcome = d.provider === 'pagerduty' ? await this.pagerDuty(d) : await this.jira(d);
    } catch (err) {
      outcome = { status: 'failed', note: (err as Error).message };
    }
    // The payload leaves the store once applied: the record keeps only the id and the outcome.
    const { payload: _dropped, ...rest } = this.deliveries.get(id) ?? d;
    await this.deliveries.put({ ...rest, ...outcome });
  }

  private async prune(): Promise<void> {
    const n = this.deliveries.count();
    if (n <= MAX_DELIVERIES) return;
    const done = this.deliveries.list((d) => d.status !== 'pending').sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : 1));
    await Promise.all(done.slice(0, n - MAX_DELIVERIES).map((d) => this.deliveries.delete(d.id)));
  }

  // -------------------------------------------------------------------------------------------
  // PagerDuty v3

  private async pagerDuty(d: InboundDeliveryRecord): Promise<{ status: InboundDeliveryRecord['status']; note: string | null }> {
    const ev = obj(obj(d.payload)['event']);
    const type = str(ev['event_type']);
    const data = obj(ev['data']);
    const externalId = str(data['id']);
    if (!type || !(PAGERDUTY_EVENTS as readonly string[]).includes(type)) return { status: 'ignored', note: `event ${type ?? '(none)'} is not one Cadre follows (${PAGERDUTY_EVENTS.join(', ')})` };
    if (!externalId) return { status: 'failed', note: 'event.data.id is missing' };
    const status = type.slice('incident.'.length) as IncidentStatus;
    const now = this.now();
    const id = `pagerduty:${externalId}`;
    const prev = this.incidents.get(id);
    const entry = { event: type, occurredAt: str(ev['occurred_at']), receivedAt: now, deliveryId: d.deliveryId };
    const service = obj(data['service']);
    const rec: IncidentRecord = {
      id, provider: 'pagerduty', externalId,
      number: typeof data['number'] === 'number' ? data['number'] : prev?.number ?? null,
      title: str(data['title']) ?? prev?.title ?? externalId,
      status, urgency: str(data['urgency']) ?? prev?.urgency ?? null,
      service: str(service['summary']) ?? str(service['id']) ?? prev?.service ?? null,
      url: str(data['html_url']) ?? prev?.url ?? null,
      history: [...(prev?.history ?? []), entry].slice(-100),
      createdAt: prev?.createdAt ?? now, updatedAt: now,
      resolvedAt: status === 'resolved' ? prev?.resolvedAt ?? entry.occurredAt ?? now : prev?.resolvedAt ?? null,
      resolutionPublishedAt: prev?.resolutionPublishedAt ?? null,
    };
    const publish = status === 'resolved' && !rec.resolutionPublishedAt;
    if (publish) rec.resolutionPublishedAt = now;
    // Stored (with the published mark) before publishing: a crash in between loses the message, never doubles it.
    await this.incidents.put(rec);
    await this.deps.audit.append({ kind: type, actor: 'pagerduty', data: { incidentId: id, title: rec.title, deliveryId: d.deliveryId } });
    if (publish) {
      // incidentId and summary are what the incident chain (engine/pr-flow/triggers.ts) reads; no source:
      // PagerDuty does not say which repository, so the chain's fixer works on the default workspace.
      const summary = `${rec.title} (PagerDuty incident${rec.number !== null ? ` #${rec.number}` : ''} ${externalId}${rec.service ? `, service ${rec.service}` : ''}${rec.url ? `, ${rec.url}` : ''})`;
      const message = { executionId: id, incidentId: id, provider: 'pagerduty', externalId, title: rec.title, summary, service: rec.service, url: rec.url, resolvedAt: rec.resolvedAt };
      await this.deps.audit.append({ kind: 'incident.resolution.completed', actor: 'engine', data: message });
      this.deps.bus.publish('incident.resolution.completed', message);
    }
    return { status: 'processed', note: `${id} ${status}${publish ? '; incident.resolution.completed published' : ''}` };
  }

  incident(id: string): IncidentRecord | undefined {
    return this.incidents.get(id);
  }

  listIncidents(): IncidentRecord[] {
    return this.incidents.list();
  }

  // -------------------------------------------------------------------------------------------
  // Jira

  private async jira(d: InboundDeliveryRecord): Promise<{ status: InboundDeliveryRecord['status']; note: string | null }> {
    const body = obj(d.payload);
    const event = str(body['webhookEvent']) ?? d.event;
    const now = this.now();
    const entry = { event, receivedAt: now, deliveryId: d.deliveryId };
    if (event === 'sprint_started' || event === 'sprint_closed' || event === 'jira:sprint_started' || event === 'jira:sprint_closed') {
      const sprint = obj(body['sprint']);
      const sprintId = str(sprint['id']);
      if (!sprintId) return { status: 'failed', note: 'sprint.id is missing' };
      const id = `jira:sprint:${sprintId}`;
      const prev = this.tracker.get(id) as TrackerSprintRecord | undefined;
      const rec: TrackerSprintRecord = {
        id, tracker: 'jira', kind: 'sprint', sprintId, name: str(sprint['name']) ?? prev?.name ?? sprintId,
        state: str(sprint['state']) ?? (event.endsWith('closed') ? 'closed' : 'active'),
        startDate: str(sprint['startDate']) ?? prev?.startDate ?? null, endDate: str(sprint['endDate']) ?? prev?.endDate ?? null,
        completeDate: str(sprint['completeDate']) ?? prev?.completeDate ?? null,
        history: [...(prev?.history ?? []), entry].slice(-100), createdAt: prev?.createdAt ?? now, updatedAt: now,
      };
      await this.tracker.put(rec);
      await this.deps.audit.append({ kind: `tracker.${event.replace(/^jira:/, '')}`, actor: 'jira', data: { sprintId, name: rec.name, deliveryId: d.deliveryId } });
      return { status: 'processed', note: `${id} ${rec.state}` };
    }
    if (event !== 'jira:issue_created' && event !== 'jira:issue_updated') return { status: 'ignored', note: `event ${event} is not one Cadre follows (${JIRA_EVENTS.join(', ')})` };
    const issue = obj(body['issue']);
    const fields = obj(issue['fields']);
    const key = str(issue['key']);
    if (!key) return { status: 'failed', note: 'issue.key is missing' };
    const id = `jira:issue:${key}`;
    const prev = this.tracker.get(id) as TrackerIssueRecord | undefined;
    const projectKey = str(obj(fields['project'])['key']) ?? key.replace(/-\d+$/, '');
    const rec: TrackerIssueRecord = {
      id, tracker: 'jira', kind: 'issue', key, projectKey,
      summary: str(fields['summary']) ?? prev?.summary ?? key, status: str(obj(fields['status'])['name']) ?? prev?.status ?? null,
      issueType: str(obj(fields['issuetype'])['name']) ?? prev?.issueType ?? null,
      history: [...(prev?.history ?? []), entry].slice(-100), taskId: prev?.taskId ?? null, taskNote: prev?.taskNote ?? null,
      createdAt: prev?.createdAt ?? now, updatedAt: now,
    };
    if (event === 'jira:issue_created' && !rec.taskId) {
      const started = await this.startTask(rec, str(fields['description']));
      rec.taskId = started.taskId; rec.taskNote = started.note;
    }
    await this.tracker.put(rec);
    await this.deps.audit.append({ kind: `tracker.${event.replace(/^jira:/, '')}`, actor: 'jira', ...(rec.taskId ? { executionId: rec.taskId } : {}), data: { key, projectKey, taskId: rec.taskId, note: rec.taskNote, deliveryId: d.deliveryId } });
    return { status: 'processed', note: `${id}${rec.taskId ? ` started ${rec.taskId}` : ''}${rec.taskNote ? ` (${rec.taskNote})` : ''}` };
  }

  private async startTask(issue: TrackerIssueRecord, description: string | null): Promise<{ taskId: string | null; note: string | null }> {
    const value = issue.projectKey ? this.deps.trackerMapping()[issue.projectKey] : undefined;
    if (value === undefined) return { taskId: null, note: `project ${issue.projectKey ?? '(none)'} is not mapped (integrations.tracker.projects.mapping)` };
    const m = parseMapping(value);
    if ('error' in m) return { taskId: null, note: `mapping of ${issue.projectKey} is invalid: ${m.error}` };
    const text = `${issue.summary}${description ? `\n\n${description}` : ''}\n\n(Jira ${issue.key})`;
    try {
      const rec = await this.deps.executions.submitTask({ task: text, capabilities: [m.capability], ...(m.verb ? { verb: m.verb } : {}), input: { tracker: { provider: 'jira', key: issue.key } } }, { keyId: null, callbackSecret: null });
      return { taskId: rec.id, note: null };
    } catch (err) {
      const code = (err as EngineError).code ?? 'ERR_INTERNAL';
      return { taskId: null, note: `the task could not start: ${code}: ${(err as Error).message}` };
    }
  }

  trackerItem(id: string): TrackerItemRecord | undefined {
    return this.tracker.get(id);
  }

  delivery(provider: string, deliveryId: string): InboundDeliveryRecord | undefined {
    return this.deliveries.get(`${provider}:${deliveryId}`);
  }
}
