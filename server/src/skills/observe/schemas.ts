/**
 * The shapes of observe-ai's artifact data (docs/api.md, "observe-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';
import { pathsField } from '../input-fields';

const iso = z.string().nullable();
const examined = z.object({
  files: z.number().int().min(0), series: z.number().int().min(0), seriesJudged: z.number().int().min(0), points: z.number().int().min(0),
  timeRange: z.object({ start: iso, end: iso }),
  logLines: z.number().int().min(0), logRecords: z.number().int().min(0), requests: z.number().int().min(0), errorLines: z.number().int().min(0), skippedLines: z.number().int().min(0),
});
const files = z.array(z.object({
  file: z.string(), kind: z.enum(['metrics', 'logs']), format: z.string(), lines: z.number().int().min(0), records: z.number().int().min(0),
  skipped: z.array(z.object({ line: z.number().int().min(0), reason: z.string() })), skippedCount: z.number().int().min(0),
}));

export const anomalySchema = z.object({
  kind: z.enum(['spike', 'dip', 'level-shift', 'slo-burn-availability', 'slo-burn-latency', 'error-burst']),
  series: z.string().min(1), name: z.string().min(1), labels: z.record(z.string(), z.string()), file: z.string(),
  start: iso, end: iso, startIndex: z.number().int().optional(), endIndex: z.number().int().optional(),
  value: z.number(), baseline: z.number(),
  magnitude: z.object({
    z: z.number().optional(), residual: z.number().optional(), shiftSigma: z.number().optional(),
    burnRate: z.object({ long: z.number(), short: z.number(), longWindow: z.string(), shortWindow: z.string() }).optional(),
    p95Ms: z.number().optional(), requests: z.number().optional(), errors: z.number().optional(), pValue: z.number().optional(),
  }),
  method: z.string().min(1),
  severity: z.enum(['critical', 'high', 'medium', 'low']),
  lines: z.array(z.number().int().min(1)),
}).refine((a) => a.start !== null || a.startIndex !== undefined, 'an anomaly has a time window or sample indexes');

export const analyzeDataSchema = z.object({
  anomalies: z.array(anomalySchema),
  examined,
  slo: z.object({ availability: z.number().gt(0).lt(1), latencyMs: z.number().positive(), latencyTarget: z.number().gt(0).lt(1) }),
  files, ignored: z.array(z.string()),
  origin: z.object({ metrics: z.string(), logs: z.string() }),
  networkIngestion: z.string(),
}).nullable();

export const alertsDataSchema = z.object({
  firing: z.number().int().min(0), resolved: z.number().int().min(0),
  rules: z.array(z.object({
    rule: z.string(), severity: z.string(), condition: z.string(), seriesMatched: z.number().int().min(0), pointsEvaluated: z.number().int().min(0),
    episodes: z.array(z.object({
      rule: z.string(), severity: z.string(), series: z.string(), state: z.enum(['firing', 'resolved']),
      since: iso, firedAt: iso, until: iso,
      points: z.array(z.object({ time: iso, value: z.number(), file: z.string(), line: z.number().int().min(1).optional() })),
      pointCount: z.number().int().min(1),
    })),
  })),
  examined, files, rulesFrom: z.string(),
}).nullable();


/**
 * The `input` of observe-ai's actions (checked before Research; published in the OpenAPI document).
 * Loose: other fields are the request's own and are ignored here. The skill still checks what the
 * files hold (format, lines) and names the file and line.
 */
export const observeInputSchema = z.looseObject({
  metrics: pathsField.optional().describe('Metrics file(s) or folder(s): Prometheus text, OpenMetrics, JSON series or CSV'),
  logs: pathsField.optional().describe('Log file(s) or folder(s): JSON lines, logfmt, nginx/Apache access logs, syslog'),
  // Objects may also arrive as JSON text (the GET form's query values are strings); the skill parses them.
  slo: z.union([z.looseObject({}), z.string()]).optional().describe('SLO targets overriding the defaults (99.5% availability, 95% under 500 ms)'),
  rules: z.union([z.string().min(1), z.array(z.looseObject({}))]).optional().describe('alerts: [{name, expr: {metric, labels?, op, threshold, for?}, severity}] or a workspace JSON/YAML file of them'),
});
