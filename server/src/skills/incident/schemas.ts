/**
 * The shapes of incident-ai's artifact data (docs/api.md, "incident-ai actions"), checked by the
 * artifact-schema gate; `triageSchema` also validates a triage given to `postmortem` as `input.triage`.
 * `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const iso = z.string().nullable();
const sev = z.enum(['SEV1', 'SEV2', 'SEV3', 'SEV4']);
export const timelineEventSchema = z.object({ time: iso, event: z.string().min(1), source: z.string().min(1), kind: z.enum(['signal-start', 'signal-end', 'alert', 'log', 'input']) });

export const triageSchema = z.object({
  severity: sev.nullable(),
  level: z.string().nullable(),
  routing: z.object({ level: z.string(), severity: z.enum(['critical', 'error', 'warning', 'info']), class: z.string().nullable(), matched: z.enum(['exact', 'more severe', 'less severe']), from: z.string() }).nullable(),
  headline: z.string().min(1),
  reasons: z.array(z.object({ level: sev, signal: z.string(), measured: z.string(), threshold: z.string(), source: z.string() })),
  impact: z.object({
    start: iso, end: iso, durationMinutes: z.number().nullable(), errorRate: z.number().nullable(), peakErrorRate: z.number().nullable(),
    requests: z.number().nullable(), failedRequests: z.number().nullable(), usersAffected: z.number().nullable(), usersShare: z.number().nullable(), sloBurn: z.number().nullable(),
  }),
  escalation: z.array(z.object({ afterMinutes: z.number().min(0), who: z.string(), action: z.string() })),
  timeline: z.array(timelineEventSchema),
});

export const triageDataSchema = triageSchema.extend({
  examined: z.array(z.string()),
  sources: z.array(z.string()).min(1),
  files: z.array(z.string()),
  logs: z.object({
    files: z.array(z.object({ file: z.string(), format: z.string(), lines: z.number().int(), records: z.number().int(), skipped: z.number().int() })),
    requests: z.number().int(), errors: z.number().int(), errorRecords: z.number().int(), errorRate: z.number().nullable(),
    peak: z.object({ start: z.string(), end: z.string(), requests: z.number(), errors: z.number(), rate: z.number(), file: z.string(), line: z.number().int().min(1) }).nullable(),
    first: iso, last: iso,
    topErrors: z.array(z.object({ message: z.string(), count: z.number().int(), file: z.string(), line: z.number().int(), time: iso })),
    lastError: z.object({ time: z.string(), file: z.string(), line: z.number().int().min(1) }).nullable(),
  }).nullable(),
}).nullable();

export const postmortemDataSchema = z.object({
  title: z.string().min(1),
  severity: sev.nullable(),
  rootCause: z.object({ status: z.enum(['stated', 'suggested', 'unknown']), text: z.string().min(1), candidates: z.array(z.string()) }),
  wentWell: z.array(z.string()), wentBadly: z.array(z.string()),
  actionItems: z.array(z.object({ priority: z.enum(['high', 'medium', 'low']), item: z.string(), owner: z.string(), why: z.string() })),
  markdown: z.string().min(1),
  from: z.string(),
  triage: triageSchema,
}).nullable();
