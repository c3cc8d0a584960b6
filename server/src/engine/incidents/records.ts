/**
 * What inbound third-party events leave in the store: incidents (PagerDuty), tracker issues and
 * sprints (Jira), and the delivery ids already received (the dedupe of replayed deliveries).
 */

export const INCIDENT_COLLECTIONS = {
  incidents: 'incidents',
  trackerItems: 'trackerItems',
  deliveries: 'inboundDeliveries',
} as const;

export type IncidentStatus = 'triggered' | 'acknowledged' | 'resolved';

export interface IncidentRecord {
  /** `<provider>:<the provider's incident id>`. */
  id: string;
  provider: string;
  externalId: string;
  number: number | null;
  title: string;
  status: IncidentStatus;
  urgency: string | null;
  service: string | null;
  url: string | null;
  /** Each event applied, in order of arrival. */
  history: Array<{ event: string; occurredAt: string | null; receivedAt: string; deliveryId: string }>;
  createdAt: string;
  updatedAt: string;
  resolvedAt: string | null;
  /** Set once `incident.resolution.completed` was published for it (never twice). */
  resolutionPublishedAt: string | null;
}

export interface TrackerIssueRecord {
  /** `<tracker>:issue:<key>`. */
  id: string;
  tracker: string;
  kind: 'issue';
  key: string;
  projectKey: string | null;
  summary: string;
  status: string | null;
  issueType: string | null;
  history: Array<{ event: string; receivedAt: string; deliveryId: string }>;
  /** The task a mapped project's issue started (once per issue). */
  taskId: string | null;
  /** Why no task was started (project not mapped, ...). */
  taskNote: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TrackerSprintRecord {
  /** `<tracker>:sprint:<id>`. */
  id: string;
  tracker: string;
  kind: 'sprint';
  sprintId: string;
  name: string;
  state: string;
  startDate: string | null;
  endDate: string | null;
  completeDate: string | null;
  history: Array<{ event: string; receivedAt: string; deliveryId: string }>;
  createdAt: string;
  updatedAt: string;
}

export type TrackerItemRecord = TrackerIssueRecord | TrackerSprintRecord;

/**
 * A delivery id received: `pending` keeps the payload until it is processed (a restart processes
 * it), `processed` / `ignored` / `failed` keep only the outcome. The newest MAX_DELIVERIES are kept.
 */
export interface InboundDeliveryRecord {
  /** `<provider>:<delivery id>`. */
  id: string;
  provider: string;
  deliveryId: string;
  receivedAt: string;
  status: 'pending' | 'processed' | 'ignored' | 'failed';
  event: string;
  note: string | null;
  payload?: unknown;
}
