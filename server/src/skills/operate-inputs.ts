/**
 * The `input` of the OPERATE and OPTIMIZE agents' actions (besides observe-ai, whose schema lives with
 * its data schemas): checked before Research, published in the skills manifest and the OpenAPI
 * document, and answered 422 at the door when a request does not fit. Loose objects: other fields are
 * the request's own. The skills still judge what the values mean (files, durations, commands).
 */
import { z } from 'zod';
import { booleanField, commandField, inlineOrFile, integerField, numberField, pathsField, spanField, timeField } from './input-fields';

export const incidentInputSchema = z.looseObject({
  logs: pathsField.optional().describe('Log file(s) or folder(s) read for error bursts and the timeline'),
  events: z.union([z.array(z.looseObject({ event: z.string().min(1), time: timeField.optional(), source: z.string().optional() })), z.string().min(1)]).optional()
    .describe('Timeline events [{time, event, source?}] (or their JSON text)'),
  errorRate: numberField.optional().describe('Error rate: a share (0.05) or a percent (5, "5%")'),
  usersAffected: integerField.optional().describe('Users affected (a whole number)'),
  totalUsers: integerField.optional().describe('All users, to turn usersAffected into a share'),
  sloBurn: numberField.optional().describe('SLO burn-rate multiple (14.4: the budget burns 14.4 times as fast as it accrues)'),
  routing: inlineOrFile.optional().describe('integrations.incident_management.routing: {<level>: {severity, class}}'),
  owner: z.string().optional().describe('Owning team named in the escalation path'),
  triage: inlineOrFile.optional().describe('postmortem: a triage (the data of incident-ai triage) to write it from'),
});

export const capacityInputSchema = z.looseObject({
  series: z.union([z.array(z.unknown()).min(1), z.string().min(1)]).optional().describe('[[timestamp, value], ...] or [value, ...] (or their JSON / comma-separated text)'),
  metrics: pathsField.optional().describe('Metrics file(s) or folder(s) in a format observe-ai parses'),
  metric: z.string().min(1).optional().describe('Series name (or name{labels}) to forecast'),
  limit: numberField.optional().describe('The capacity the series must stay under (time to saturation)'),
  horizon: spanField.optional().describe('How far to forecast: points or a duration (12h, 30d, 2w)'),
  season: integerField.optional().describe('Season length in points (else found by autocorrelation)'),
  headroom: numberField.optional().describe('recommend: target utilisation, a share (0.7) or a percent (70)'),
  leadTime: spanField.optional().describe('recommend: time needed to add capacity (default 1 day)'),
  unitCapacity: numberField.optional().describe('recommend: capacity of one instance'),
  instances: integerField.optional().describe('recommend: instances running now'),
});

export const maintainInputSchema = z.looseObject({
  path: z.string().min(1).optional().describe('Workspace folder holding the manifest (default: the workspace root)'),
  registry: inlineOrFile.optional().describe('Registry metadata (packuments by name) inline or as a workspace file; else fetched when online and allowed'),
  online: booleanField.optional().describe('false keeps the step off the network'),
  batch: z.enum(['patch', 'minor', 'major']).optional().describe('fix: which update batch to apply (default patch)'),
});

export const backupInputSchema = z.looseObject({
  paths: pathsField.optional().describe('snapshot: workspace files or folders to archive (default: the workspace)'),
  destination: z.string().min(1).optional().describe('snapshot: folder for the archive (default .cadre/backups)'),
  store: booleanField.optional().describe('true asks for Cadre\'s own store: refused here (use `cadre store backup`)'),
  archive: z.string().min(1).optional().describe('verify: the archive to restore and check (default: the newest)'),
  manifest: z.string().min(1).optional().describe('verify: the manifest to check against (default: the one inside the archive)'),
});

export const optimizeInputSchema = z.looseObject({
  profile: pathsField.optional().describe('analyze: .cpuprofile, Chrome trace or --prof-process text file(s)'),
  files: pathsField.optional().describe('analyze: same as profile'),
  threshold: numberField.optional().describe('analyze: share (0.1) or percent (10) of profiled time that makes a function hot'),
  command: commandField.optional().describe('benchmark: command line or argv to run'),
  baseline: commandField.optional().describe('benchmark: command to compare with, interleaved in the same run'),
  runs: integerField.optional().describe('benchmark: measured runs (default 10)'),
  warmup: integerField.optional().describe('benchmark: unmeasured runs first (default 1)'),
  timeoutMs: integerField.optional().describe('benchmark: per-run timeout in ms (default 60000)'),
});

export const dbaInputSchema = z.looseObject({
  files: pathsField.optional().describe('SQL files and JS/TS sources to analyse (default: found in the workspace)'),
  schema: pathsField.optional().describe('DDL file(s) with the tables and indexes'),
  dialect: z.string().min(1).optional().describe('postgresql (pg, postgres) or mysql (mariadb)'),
});

export const costInputSchema = z.looseObject({
  export: pathsField.optional().describe('Billing export(s): AWS CUR (legacy or 2.0), GCP billing export, or the generic CSV'),
  top: integerField.optional().describe('report: how many rows per breakdown'),
  utilization: inlineOrFile.optional().describe('optimize: utilisation per resource, inline or a JSON/YAML file'),
  reservations: inlineOrFile.optional().describe('optimize: reserved-capacity offers for the break-even'),
});

export const billingInputSchema = z.looseObject({
  usage: z.looseObject({ asOf: z.string(), executions: z.array(z.unknown()) }).optional().describe('Handed in by the engine: the store\'s execution summaries (a request\'s own value is replaced)'),
  since: timeField.optional().describe('Window start (ISO 8601)'),
  until: timeField.optional().describe('Window end (ISO 8601)'),
  horizon: spanField.optional().describe('analytics: forecast horizon (points or a duration)'),
});

export const deployInputSchema = z.looseObject({
  environment: z.string().min(1).optional().describe('Target environment (default staging)'),
  strategy: z.string().min(1).optional().describe('canary (default) or blue-green'),
  previousCommit: z.string().min(1).optional().describe('Commit to roll back to (default: the one before HEAD)'),
  healthUrl: z.string().min(1).optional().describe('deploy: URL probed after the deploy'),
  timeoutMs: integerField.optional().describe('deploy: timeout of the deploy command in ms'),
});
