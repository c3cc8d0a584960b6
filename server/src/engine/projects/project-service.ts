/**
 * Projects, their metric series, predictions and remediations (the contract's second API surface).
 * Records live in the store's collections (records.ts); every analysis runs as an execution through
 * the engine: capacity-ai forecasts each ingested series with a limit (predictions.ts turns the
 * forecast into a prediction), backup-ai snapshots the workspace before a remediation.
 *
 * Events (bus topic `service.event`, the outbound webhooks subscribe): prediction.created when a
 * series' forecast first reaches its limit, prediction.updated when a later detection moves its
 * severity, time or confidence, prediction.resolved when a later forecast stays under the limit;
 * remediation.started, then remediation.completed (status completed or not_applicable) or
 * remediation.failed.
 */
import { DEFAULT_TENANT_ID, tenantOf } from '../tenants/tenant-id';
import { EngineError } from '../errors';
import type { MessageBus, ServiceEvent } from '../bus';
import type { ExecutionService, Principal } from '../executions/execution-service';
import type { AttachmentStore, AuditTrail, Clock, CollectionStore, Repository } from '../ports';
import { projectMetrics, mergePoints, type BenchmarkComparison, type MetricsBasis, type ProjectMetrics } from './metrics';
import { changedFields, predictionFrom, predictionFromAnomaly, type AnomalyView, type ForecastView, type PredictionDraft } from './predictions';
import {
  PROJECT_COLLECTIONS, REMEDIATION_STEPS, type PredictionRecord, type ProjectRecord, type ProjectSeriesRecord, type ProjectSettings,
  type ProjectStatus, type RemediationRecord, type RemediationStep, type RemediationStepName,
} from './records';
import { runAction, type ActionResult } from './run-action';

/** Points kept per series (the oldest leave first) and series per project. */
export const MAX_POINTS_PER_SERIES = 10_000;
export const MAX_SERIES_PER_PROJECT = 50;
/** optimize-ai benchmark comparisons kept for performance_gain (the newest). */
export const MAX_BENCHMARK_NOTES = 1000;
/** Fixed security findings kept for issues_prevented (the newest). */
export const MAX_FIXED_FINDING_NOTES = 10_000;

/** A security finding a later scan of a workspace no longer found (security.vulnerability_fixed). */
export interface FixedFindingNote { id: string; source: string; fingerprint: string; fixedAt: string }

/** One optimize-ai benchmark comparison, noted when its execution completed. */
export interface BenchmarkNote extends BenchmarkComparison {
  /** `<executionId>#<step>`. */
  id: string;
  /** The execution's source folder (a project's workspace). */
  source: string;
}

export interface ProjectServiceDeps {
  store: CollectionStore;
  bus: MessageBus;
  executions: ExecutionService;
  audit: AuditTrail;
  clock: Clock;
  attachments?: AttachmentStore;
  newId(prefix: string): string;
  /** Refuses a project of a tenant at its `projects` quota (tenants/tenant-service.ts); absent: no quota. */
  admitTenant?(tenantId: string): void;
  log(line: string): void;
}

export interface NewProject {
  name: string;
  description?: string;
  repository?: { type: string; url: string };
  /** The resolved local folder (the door checks it exists), or null for a remote repository. */
  workspace: string | null;
  settings?: Partial<ProjectSettings>;
  status?: ProjectStatus;
}

export interface IngestedSeries { key: string; rate: boolean; points: Array<[number, number]> }

export interface Page<T> { items: T[]; total: number }

const SEVERITY_RANK = { critical: 4, high: 3, medium: 2, low: 1 } as const;
const rank = (s: keyof typeof SEVERITY_RANK) => SEVERITY_RANK[s];

const DEFAULT_SETTINGS: ProjectSettings = { auto_fix: false, predictive_analysis: true, security_scanning: false };

export class ProjectService {
  private readonly projects: Repository<ProjectRecord>;
  private readonly series: Repository<ProjectSeriesRecord>;
  private readonly predictions: Repository<PredictionRecord>;
  private readonly remediations: Repository<RemediationRecord>;
  private readonly benchmarks: Repository<BenchmarkNote>;
  private readonly fixes: Repository<FixedFindingNote>;
  /** One detection at a time per project (a second request waits for the first, then runs on newer data). */
  private readonly detecting = new Map<string, Promise<unknown>>();
  private readonly queued = new Map<string, Promise<PredictionRecord[]>>();
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly deps: ProjectServiceDeps) {
    this.projects = deps.store.collection<ProjectRecord>(PROJECT_COLLECTIONS.projects);
    this.series = deps.store.collection<ProjectSeriesRecord>(PROJECT_COLLECTIONS.series);
    this.predictions = deps.store.collection<PredictionRecord>(PROJECT_COLLECTIONS.predictions);
    this.remediations = deps.store.collection<RemediationRecord>(PROJECT_COLLECTIONS.remediations);
    this.benchmarks = deps.store.collection<BenchmarkNote>(PROJECT_COLLECTIONS.benchmarks);
    // optimize-ai benchmarks are noted when they complete (their record is still in memory then), so a
    // project's performance_gain never reads ended executions back from disk.
    deps.bus.subscribe('engine.event', (e) => {
      if (e.type === 'execution_completed') this.track(this.noteBenchmark(e.execution_id).catch((err: unknown) => deps.log(`benchmark note of ${e.execution_id} failed: ${(err as Error).message}`)));
    });
    // Findings a later scan no longer finds (engine/events/service-events.ts) count as issues prevented
    // for the project whose workspace the scan ran on.
    this.fixes = deps.store.collection<FixedFindingNote>(PROJECT_COLLECTIONS.fixedFindings);
    deps.bus.subscribe('service.event', (e) => {
      if (e.event === 'security.vulnerability_fixed') this.track(this.noteFix(e).catch((err: unknown) => deps.log(`fixed-finding note failed: ${(err as Error).message}`)));
    });
  }

  private async noteFix(e: ServiceEvent): Promise<void> {
    const executionId = e.executionId ?? (typeof e.data['execution_id'] === 'string' ? e.data['execution_id'] : undefined);
    const source = executionId ? this.deps.executions.find(executionId)?.request.source : undefined;
    const fp = (e.data['finding'] as { fingerprint?: unknown } | undefined)?.fingerprint;
    if (!executionId || !source || typeof fp !== 'string') return;
    await this.fixes.put({ id: `${executionId}#${fp}`, source, fingerprint: fp, fixedAt: e.occurredAt ?? this.now() });
    if (this.fixes.count() > MAX_FIXED_FINDING_NOTES) {
      const old = this.fixes.list().sort((a, b) => (a.fixedAt < b.fixedAt ? -1 : 1));
      await Promise.all(old.slice(0, old.length - MAX_FIXED_FINDING_NOTES).map((f) => this.fixes.delete(f.id)));
    }
  }

  private async noteBenchmark(executionId: string): Promise<void> {
    const e = this.deps.executions.find(executionId);
    const source = e?.request.source;
    if (!e || !source) return;
    for (const st of e.steps) {
      if (st.agentId !== 'optimize-ai' || st.action !== 'benchmark' || st.outcome !== 'completed') continue;
      let out = st.output as { comparison?: { ratio: number; verdict: BenchmarkComparison['verdict'] } | null; attachment?: string } | null;
      if (out && typeof out.attachment === 'string' && this.deps.attachments) {
        const text = await this.deps.attachments.get(executionId, out.attachment.split('/').slice(1).join('/'));
        out = text ? JSON.parse(text) : null;
      }
      const cmp = out?.comparison;
      if (!cmp || !(cmp.ratio > 0)) continue;
      await this.benchmarks.put({ id: `${executionId}#${st.step}`, executionId, source, completedAt: st.completedAt ?? e.updatedAt, ratio: cmp.ratio, verdict: cmp.verdict });
    }
    if (this.benchmarks.count() > MAX_BENCHMARK_NOTES) {
      const old = this.benchmarks.list().sort((a, b) => (a.completedAt < b.completedAt ? -1 : 1));
      await Promise.all(old.slice(0, old.length - MAX_BENCHMARK_NOTES).map((b) => this.benchmarks.delete(b.id)));
    }
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  // -------------------------------------------------------------------------------------------
  // Projects

  async create(p: NewProject, who: Principal): Promise<ProjectRecord> {
    this.deps.admitTenant?.(who.tenantId ?? DEFAULT_TENANT_ID);
    const now = this.now();
    const rec: ProjectRecord = {
      id: this.deps.newId('proj'), name: p.name, description: p.description ?? '', status: p.status ?? 'active',
      repository: p.repository ?? null, workspace: p.workspace, settings: { ...DEFAULT_SETTINGS, ...(p.settings ?? {}) },
      createdAt: now, updatedAt: now, ownerKeyId: who.keyId, tenantId: who.tenantId ?? DEFAULT_TENANT_ID,
    };
    await this.projects.put(rec);
    return rec;
  }

  get(id: string): ProjectRecord {
    const rec = this.projects.get(id);
    if (!rec) throw new EngineError('ERR_NOT_FOUND', `no project ${id}`, { details: { id } });
    return rec;
  }

  /** The project as `tenantId` sees it: another tenant's is ERR_NOT_FOUND like a missing one. */
  getFor(tenantId: string, id: string): ProjectRecord {
    const rec = this.projects.get(id);
    if (!rec || tenantOf(rec) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no project ${id}`, { details: { id } });
    return rec;
  }

  /** A prediction as `tenantId` sees it (it belongs to its project's tenant). */
  predictionFor(tenantId: string, id: string): PredictionRecord {
    const p = this.predictions.get(id);
    if (!p || tenantOf(this.projects.get(p.projectId) ?? { tenantId: '' }) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no prediction ${id}`, { details: { id } });
    return p;
  }

  /** A remediation as `tenantId` sees it. */
  remediationFor(tenantId: string, id: string): RemediationRecord {
    const r = this.remediations.get(id);
    if (!r || tenantOf(r) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no remediation ${id}`, { details: { id } });
    return r;
  }

  /** How many projects a tenant has (its `projects` quota). */
  countOf(tenantId: string): number {
    return this.projects.list((r) => tenantOf(r) === tenantId).length;
  }

  /** Oldest first (a stable order for paging: new projects go to the last page); only `tenantId`'s when given. */
  list(q: { page: number; limit: number; status?: ProjectStatus; tenantId?: string }): Page<ProjectRecord> {
    const all = this.projects.list((r) => (!q.status || r.status === q.status) && (q.tenantId === undefined || tenantOf(r) === q.tenantId)).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
    return { items: all.slice((q.page - 1) * q.limit, q.page * q.limit), total: all.length };
  }

  async update(id: string, patch: { name?: string; description?: string; status?: ProjectStatus; settings?: Partial<ProjectSettings>; metricsPath?: string | null }): Promise<ProjectRecord> {
    const rec = this.get(id);
    if (patch.metricsPath && !rec.workspace) throw new EngineError('ERR_VALIDATION', `project ${id} has no local workspace: metrics_path names a file in one`, { details: { errors: [{ field: 'body.metrics_path', message: 'the project\'s repository is remote' }] } });
    return this.projects.update(id, {
      ...(patch.metricsPath !== undefined ? { metricsPath: patch.metricsPath } : {}),
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.settings ? { settings: { ...rec.settings, ...patch.settings } } : {}),
      updatedAt: this.now(),
    });
  }

  /** Deletes the project with its series and predictions; remediations stay (they are history). */
  async delete(id: string): Promise<void> {
    this.get(id);
    const writes: Array<Promise<unknown>> = [];
    for (const s of this.series.list((r) => r.projectId === id)) writes.push(this.series.delete(s.id));
    for (const p of this.predictions.list((r) => r.projectId === id)) writes.push(this.predictions.delete(p.id));
    writes.push(this.projects.delete(id));
    await Promise.all(writes);
  }

  metricsOf(project: ProjectRecord): { metrics: ProjectMetrics; basis: MetricsBasis } {
    const fixed = project.workspace ? this.fixes.list((f) => f.source === project.workspace).length : 0;
    return projectMetrics(this.seriesOf(project.id), this.predictions.list((p) => p.projectId === project.id), this.benchmarksOf(project), fixed);
  }

  /** optimize-ai benchmarks with a baseline that ran on the project's workspace (noted as they completed). */
  private benchmarksOf(project: ProjectRecord): BenchmarkComparison[] {
    if (!project.workspace) return [];
    return this.benchmarks.list((b) => b.source === project.workspace);
  }

  // -------------------------------------------------------------------------------------------
  // Metric series

  seriesOf(projectId: string): ProjectSeriesRecord[] {
    return this.series.list((s) => s.projectId === projectId).sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  /**
   * Merges ingested points into the project's series (a sample at a time already held replaces it)
   * and sets the limits given. Resolves once durable; detection runs afterwards (`detect`).
   */
  async ingest(projectId: string, batch: IngestedSeries[], limits: Record<string, number>): Promise<ProjectSeriesRecord[]> {
    const project = this.get(projectId);
    if (project.status === 'archived') throw new EngineError('ERR_CONFLICT', `project ${projectId} is archived: it takes no more metrics`);
    const existing = new Map(this.seriesOf(projectId).map((s) => [s.key, s]));
    const unknownLimits = Object.keys(limits).filter((k) => !existing.has(k) && !batch.some((b) => b.key === k));
    if (unknownLimits.length) {
      throw new EngineError('ERR_VALIDATION', `limits name series that are neither ingested nor held: ${unknownLimits.join(', ')}`, {
        details: { errors: unknownLimits.map((k) => ({ field: `body.limits.${k}`, message: 'no such series in this request or the project' })) },
      });
    }
    const keys = new Set([...existing.keys(), ...batch.map((b) => b.key)]);
    if (keys.size > MAX_SERIES_PER_PROJECT) throw new EngineError('ERR_VALIDATION', `a project holds at most ${MAX_SERIES_PER_PROJECT} series (this request would make ${keys.size})`);
    const now = this.now();
    const touched = new Map<string, ProjectSeriesRecord>();
    for (const b of batch) {
      const prev = touched.get(b.key) ?? existing.get(b.key);
      touched.set(b.key, {
        id: `${projectId}|${b.key}`, projectId, key: b.key, rate: b.rate, limit: prev?.limit ?? null,
        points: mergePoints(prev?.points ?? [], b.points, MAX_POINTS_PER_SERIES), updatedAt: now,
      });
    }
    for (const [k, limit] of Object.entries(limits)) {
      const rec = touched.get(k) ?? { ...existing.get(k)!, updatedAt: now };
      touched.set(k, { ...rec, limit });
    }
    await Promise.all([...touched.values()].map((r) => this.series.put(r)));
    return [...touched.values()];
  }

  // -------------------------------------------------------------------------------------------
  // Predictions

  /** Runs detection in the background (errors are logged); `settled()` waits for it in tests and shutdown. */
  detectLater(projectId: string, who: Principal): void {
    this.track(this.detect(projectId, who).catch((err: unknown) => this.deps.log(`prediction detection of ${projectId} failed: ${(err as Error).message}`)));
  }

  /**
   * Forecasts every series of the project that has a limit (one capacity-ai forecast execution per
   * series) and creates, updates or resolves its prediction. Serial per project. Resolves with the
   * open predictions of the series forecast.
   */
  detect(projectId: string, who: Principal): Promise<PredictionRecord[]> {
    // At most one detection runs and one waits per project: a request while one waits joins it (it
    // starts after this request and reads the newest data), so a scraper ingesting every few seconds
    // does not pile up forecasts.
    const waiting = this.queued.get(projectId);
    if (waiting) return waiting;
    const prev = this.detecting.get(projectId) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => {
      this.queued.delete(projectId);
      return this.detectNow(projectId, who);
    });
    this.queued.set(projectId, next);
    this.detecting.set(projectId, next);
    void next.finally(() => { if (this.detecting.get(projectId) === next) this.detecting.delete(projectId); }).catch(() => undefined);
    return next;
  }

  private async detectNow(projectId: string, who: Principal): Promise<PredictionRecord[]> {
    const project = this.get(projectId);
    if (!project.settings.predictive_analysis || project.status !== 'active') return [];
    const out: PredictionRecord[] = [];
    for (const s of this.seriesOf(projectId)) {
      if (s.limit === null || s.points.length === 0) continue;
      const r = await runAction(this.deps, 'capacity-ai', 'forecast', {
        // horizon 1: only the saturation search matters here (it looks 10x the series' length ahead); the rows stay few.
        input: { series: s.points.map(([t, v]) => [new Date(t).toISOString(), v]), limit: s.limit, horizon: 1 },
        prompt: `forecast ${s.key} of project ${project.name} against its limit ${s.limit}`,
      }, who);
      const pred = await this.applyForecast(project, s, r);
      if (pred?.status === 'open') out.push(pred);
    }
    if (project.workspace && project.metricsPath) out.push(...await this.detectAnomalies(project, who));
    return out;
  }

  /**
   * observe-ai `analyze` on the workspace's `metrics_path` (an execution): each anomaly is a
   * prediction (one open per kind and series); an open one no longer found is resolved. An analysis
   * that could not run changes nothing.
   */
  private async detectAnomalies(project: ProjectRecord, who: Principal): Promise<PredictionRecord[]> {
    const r = await runAction(this.deps, 'observe-ai', 'analyze', {
      input: { metrics: project.metricsPath }, source: project.workspace!, prompt: `analyze ${project.metricsPath} of project ${project.name}`,
    }, who);
    if (r.execution.status !== 'completed' || r.step?.outcome !== 'completed') {
      this.deps.log(`observe-ai analyze of ${project.id} ${project.metricsPath}: ${r.execution.status} (${r.step?.reason ?? r.execution.error?.message ?? 'no reason'})`);
      return this.predictions.list((p) => p.projectId === project.id && p.status === 'open' && (p.detector ?? '').startsWith('observe-ai:'));
    }
    const anomalies = ((r.data as { anomalies?: AnomalyView[] } | null)?.anomalies ?? []);
    const nowMs = this.deps.clock.now();
    const found = new Map<string, { a: AnomalyView; draft: PredictionDraft }>();
    for (const a of anomalies) {
      const draft = predictionFromAnomaly(a, r.step.confidence ?? 0, nowMs);
      const key = `observe-ai:${a.kind}|${a.series}`;
      // The most severe anomaly of a kind in a series stands for it (the first at equal severity).
      if (draft && (!found.has(key) || rank(draft.severity) > rank(found.get(key)!.draft.severity))) found.set(key, { a, draft });
    }
    const out: PredictionRecord[] = [];
    for (const { a, draft } of found.values()) out.push(await this.applyDraft(project, a.series, `observe-ai:${a.kind}`, draft, r.execution.id, 'observe-ai'));
    const now = new Date(nowMs).toISOString();
    for (const open of this.predictions.list((p) => p.projectId === project.id && p.status === 'open' && (p.detector ?? '').startsWith('observe-ai:'))) {
      if (found.has(`${open.detector}|${open.seriesKey}`)) continue;
      const resolved = await this.predictions.update(open.id, { status: 'resolved', resolved_at: now, updated_at: now, executionId: r.execution.id });
      await this.publishPrediction('prediction.resolved', resolved, { reason: `observe-ai no longer finds ${open.detector!.slice('observe-ai:'.length)} in ${open.seriesKey}` });
    }
    return out;
  }

  /** Creates the prediction of (detector, series), or updates the open one (event when something moved). */
  private async applyDraft(project: ProjectRecord, seriesKey: string, detector: string, draft: PredictionDraft, executionId: string, agentId: string): Promise<PredictionRecord> {
    const open = this.predictions.list((p) => p.projectId === project.id && p.seriesKey === seriesKey && (p.detector ?? 'capacity-ai') === detector && p.status === 'open')[0];
    const now = this.now();
    if (open) {
      const changed = changedFields(open, draft);
      const updated = await this.predictions.update(open.id, { ...draft, updated_at: now, executionId });
      if (changed.length) await this.publishPrediction('prediction.updated', updated, { changed }, agentId);
      return updated;
    }
    const rec: PredictionRecord = {
      id: this.deps.newId('pred'), projectId: project.id, seriesKey, detector, status: 'open', ...draft,
      predicted_impact: { users_affected: null, downtime_minutes: null, revenue_loss: null, basis: 'Cadre holds no figures of users or revenue for this project; only the metric series' },
      predicted_at: now, updated_at: now, resolved_at: null, executionId,
    };
    await this.predictions.put(rec);
    await this.publishPrediction('prediction.created', rec, {}, agentId);
    return rec;
  }

  private async applyForecast(project: ProjectRecord, s: ProjectSeriesRecord, r: ActionResult): Promise<PredictionRecord | undefined> {
    const open = this.predictions.list((p) => p.projectId === project.id && p.seriesKey === s.key && (p.detector ?? 'capacity-ai') === 'capacity-ai' && p.status === 'open')[0];
    if (r.execution.status !== 'completed' || r.step?.outcome !== 'completed') {
      // A forecast that could not run says nothing about the series: the open prediction stays as it was.
      this.deps.log(`capacity-ai forecast of ${project.id} ${s.key}: ${r.execution.status} (${r.step?.reason ?? r.execution.error?.message ?? 'no reason'})`);
      return open;
    }
    const given = (r.data as { forecasts?: ForecastView[] } | null)?.forecasts?.[0];
    if (!given) return open;
    // capacity-ai names an inline series `input.series`; the prediction speaks of the project's series.
    const forecast: ForecastView = { ...given, series: s.key };
    const nowMs = this.deps.clock.now(); const now = new Date(nowMs).toISOString();
    const draft = predictionFrom(forecast, r.step.confidence ?? 0, nowMs);
    if (!draft) {
      if (!open) return undefined;
      const resolved = await this.predictions.update(open.id, { status: 'resolved', resolved_at: now, updated_at: now, executionId: r.execution.id });
      await this.publishPrediction('prediction.resolved', resolved, { reason: forecast.saturation.text });
      return resolved;
    }
    return this.applyDraft(project, s.key, 'capacity-ai', draft, r.execution.id, 'capacity-ai');
  }

  private async publishPrediction(event: 'prediction.created' | 'prediction.updated' | 'prediction.resolved', p: PredictionRecord, extra: Record<string, unknown>, agentId = (p.detector ?? 'capacity-ai').split(':')[0]!): Promise<void> {
    await this.deps.audit.append({ kind: event, actor: 'engine', executionId: p.executionId, agentId, data: { predictionId: p.id, projectId: p.projectId, series: p.seriesKey, severity: p.severity, will_occur_at: p.will_occur_at, ...extra } });
    this.deps.bus.publish('service.event', { event, data: { prediction: predictionView(p), ...extra }, executionId: p.executionId });
  }

  getPrediction(id: string): PredictionRecord {
    const p = this.predictions.get(id);
    if (!p) throw new EngineError('ERR_NOT_FOUND', `no prediction ${id}`, { details: { id } });
    return p;
  }

  /** Newest first. */
  predictionsOf(projectId: string, q: { page: number; limit: number; status?: 'open' | 'resolved' }): Page<PredictionRecord> {
    this.get(projectId);
    const all = this.predictions.list((p) => p.projectId === projectId && (!q.status || p.status === q.status))
      .sort((a, b) => (a.predicted_at < b.predicted_at ? 1 : a.predicted_at > b.predicted_at ? -1 : a.id < b.id ? 1 : -1));
    return { items: all.slice((q.page - 1) * q.limit, q.page * q.limit), total: all.length };
  }

  // -------------------------------------------------------------------------------------------
  // Remediations

  getRemediation(id: string): RemediationRecord {
    const r = this.remediations.get(id);
    if (!r) throw new EngineError('ERR_NOT_FOUND', `no remediation ${id}`, { details: { id } });
    return r;
  }

  /** Stores the remediation (in_progress) and runs its steps in the background. */
  async remediate(predictionId: string, options: RemediationRecord['options'], who: Principal): Promise<RemediationRecord> {
    const pred = this.getPrediction(predictionId);
    if (pred.status !== 'open') throw new EngineError('ERR_CONFLICT', `prediction ${predictionId} is resolved: there is nothing to remediate`);
    const busy = this.remediations.list((r) => r.predictionId === predictionId && (r.status === 'in_progress' || r.status === 'needs_approval'))[0];
    if (busy) throw new EngineError('ERR_CONFLICT', `remediation ${busy.id} of prediction ${predictionId} is still in progress`, { details: { remediationId: busy.id } });
    const project = this.get(pred.projectId);
    const rec: RemediationRecord = {
      id: this.deps.newId('rem'), predictionId, projectId: project.id, status: 'in_progress', action: 'apply', mode: 'automatic', options,
      started_at: this.now(), completed_at: null, error: null, ownerKeyId: who.keyId, tenantId: tenantOf(project),
      steps: REMEDIATION_STEPS.map((name) => ({ name, status: 'pending', progress: 0, reason: null, executionId: null, detail: null })),
    };
    await this.remediations.put(rec);
    await this.deps.audit.append({ kind: 'remediation.started', actor: who.keyId ? `key:${who.keyId}` : 'engine', tenantId: tenantOf(rec), data: { remediationId: rec.id, predictionId, projectId: project.id, options } });
    this.deps.bus.publish('service.event', { event: 'remediation.started', data: { remediation: remediationView(rec), prediction: predictionView(pred) } });
    this.track(this.runRemediation(rec.id, who).catch(async (err: unknown) => {
      this.deps.log(`remediation ${rec.id} failed: ${(err as Error).message}`);
      await this.finish(rec.id, 'failed', (err as Error).message).catch(() => undefined);
    }));
    return rec;
  }

  private async setStep(id: string, name: RemediationStepName, patch: Partial<RemediationStep>): Promise<RemediationRecord> {
    const rec = this.getRemediation(id);
    return this.remediations.update(id, { steps: rec.steps.map((s) => (s.name === name ? { ...s, ...patch } : s)) });
  }

  private async runRemediation(id: string, who: Principal): Promise<void> {
    const rem = this.getRemediation(id);
    const pred = this.getPrediction(rem.predictionId);
    const project = this.get(rem.projectId);
    const step = (name: RemediationStepName, patch: Partial<RemediationStep>) => this.setStep(id, name, patch);
    // A step's execution reports progress (work_progress) and may wait for an ACMF approval: the step
    // and the remediation say so while it lasts. Only a running step is touched (never one that ended).
    const progressOf = (name: RemediationStepName) => (e: { type: string; progress?: number; approved?: boolean }) => {
      const current = this.remediations.get(id)?.steps.find((x) => x.name === name);
      if (!current || (current.status !== 'in_progress' && current.status !== 'needs_approval')) return;
      const bg = (p: Promise<unknown>) => void p.catch(() => undefined);
      if (e.type === 'work_progress' && typeof e.progress === 'number') bg(step(name, { progress: Math.max(current.progress, Math.min(99, e.progress)) }));
      if (e.type === 'approval_requested') {
        bg(step(name, { status: 'needs_approval', reason: 'waiting for an ACMF approval (cadre approvals)' }));
        bg(this.remediations.update(id, { status: 'needs_approval' }));
      }
      if (e.type === 'approval_decided') {
        bg(step(name, { status: 'in_progress', reason: null }));
        bg(this.remediations.update(id, { status: 'in_progress' }));
      }
    };

    // 1. create_backup: backup-ai snapshot of the workspace, through the engine.
    if (!rem.options.create_backup) await step('create_backup', { status: 'skipped', progress: 100, reason: 'options.create_backup is false' });
    else if (!project.workspace) await step('create_backup', { status: 'not_applicable', progress: 100, reason: 'the project has no local workspace to snapshot (its repository is remote)' });
    else {
      await step('create_backup', { status: 'in_progress' });
      const r = await runAction(this.deps, 'backup-ai', 'snapshot', { input: {}, source: project.workspace, prompt: `snapshot ${project.name} before remediating ${pred.id}` }, who, progressOf('create_backup'));
      const data = r.data as { archive?: string; manifest?: string; fileCount?: number; archiveSha256?: string } | null;
      if (r.execution.status === 'completed' && r.step?.outcome === 'completed' && data?.archive) {
        await step('create_backup', { status: 'completed', progress: 100, executionId: r.execution.id, detail: { archive: data.archive, manifest: data.manifest ?? null, fileCount: data.fileCount ?? null, archiveSha256: data.archiveSha256 ?? null } });
      } else {
        const why = r.step?.reason ?? r.execution.error?.message ?? `backup-ai snapshot ${r.execution.status}`;
        await step('create_backup', { status: 'failed', progress: 100, executionId: r.execution.id, reason: why });
        for (const n of ['apply', 'verify', 'notify', 'rollback_on_failure'] as const) await step(n, { status: 'skipped', reason: 'the backup failed: nothing was changed' });
        await this.notify(id, rem.options.notify_team);
        return this.finish(id, 'failed', `create_backup failed: ${why}`);
      }
    }

    // 2. apply: the recommended action. Cadre links no infrastructure configuration to a project, so
    //    a capacity change is computed (capacity-ai recommend, through the engine) but not made.
    await step('apply', { status: 'in_progress' });
    if (pred.type === 'capacity_exhaustion') {
      const s = this.series.get(`${project.id}|${pred.seriesKey}`);
      if (s && s.limit !== null) {
        const r = await runAction(this.deps, 'capacity-ai', 'recommend', {
          input: { series: s.points.map(([t, v]) => [new Date(t).toISOString(), v]), limit: s.limit, horizon: 1 },
          prompt: `scaling recommendation for ${s.key} of ${project.name}`,
        }, who, progressOf('apply'));
        const rec = (r.data as { recommendations?: Array<{ text: string; action: string; scaleBy: string | null; neededCapacity: number }> } | null)?.recommendations?.[0];
        await step('apply', {
          status: 'not_applicable', progress: 100, executionId: r.execution.id,
          reason: `no change Cadre can make: the project links no capacity configuration to edit${rec ? `; capacity-ai recommends: ${rec.text}` : ''}`,
          detail: rec ? { recommendation: rec } : null,
        });
      } else {
        await step('apply', { status: 'not_applicable', progress: 100, reason: `the series ${pred.seriesKey} or its limit is gone` });
      }
    } else {
      await step('apply', { status: 'not_applicable', progress: 100, reason: `${pred.type} needs an investigation, not an automatic change: ${pred.recommended_action.description}` });
    }

    // 3. verify: detection runs again on the project's current data.
    await step('verify', { status: 'in_progress' });
    await this.detect(project.id, who);
    const after = this.getPrediction(pred.id);
    await step('verify', {
      status: 'completed', progress: 100, executionId: after.executionId,
      reason: after.status === 'open' ? `the forecast still reaches the limit (${after.will_occur_at})` : 'the forecast stays under the limit: prediction resolved',
      detail: { prediction_status: after.status, will_occur_at: after.will_occur_at },
    });

    // 4. notify, 5. rollback: nothing was changed, so there is nothing to roll back.
    await this.notify(id, rem.options.notify_team);
    await step('rollback_on_failure', rem.options.rollback_on_failure
      ? { status: 'not_applicable', progress: 100, reason: 'apply changed nothing: there is nothing to roll back' }
      : { status: 'skipped', progress: 100, reason: 'options.rollback_on_failure is false' });
    // No step changed anything: the remediation says so rather than report a fix (see docs/api.md).
    return this.finish(id, 'not_applicable', null);
  }

  private async notify(id: string, notifyTeam: boolean): Promise<void> {
    // The remediation.* events go out in any case (webhook catalog); notify_team also records it in the audit trail.
    if (!notifyTeam) { await this.setStep(id, 'notify', { status: 'skipped', progress: 100, reason: 'options.notify_team is false' }); return; }
    // A remediation names no execution: its tenant (the project's) is stamped here.
    await this.deps.audit.append({ kind: 'remediation.notified', actor: 'engine', tenantId: tenantOf(this.remediations.get(id)), data: { remediationId: id } });
    await this.setStep(id, 'notify', { status: 'completed', progress: 100, reason: 'the outcome is published as a remediation.* event (outbound webhooks)' });
  }

  private async finish(id: string, status: RemediationRecord['status'], error: string | null): Promise<void> {
    const rec = await this.remediations.update(id, { status, completed_at: this.now(), error });
    const event = status === 'failed' || status === 'rolled_back' ? 'remediation.failed' : 'remediation.completed';
    await this.deps.audit.append({ kind: `remediation.${status}`, actor: 'engine', tenantId: tenantOf(rec), data: { remediationId: id, predictionId: rec.predictionId, error } });
    this.deps.bus.publish('service.event', { event, data: { remediation: remediationView(rec) } });
  }

  /** Remediations a stopped server left in progress end failed (their executions resume on their own; the steps do not). */
  async closeInterrupted(): Promise<string[]> {
    const stale = this.remediations.list((r) => r.status === 'in_progress' || r.status === 'needs_approval');
    for (const r of stale) {
      const step = r.steps.find((s) => s.status === 'in_progress' || s.status === 'pending' || s.status === 'needs_approval');
      await this.remediations.update(r.id, {
        steps: r.steps.map((s) => (s.status === 'in_progress' || s.status === 'pending' || s.status === 'needs_approval' ? { ...s, status: 'skipped' as const, reason: 'the server stopped during the remediation' } : s)),
      });
      await this.finish(r.id, 'failed', `interrupted by a server stop at step ${step?.name ?? 'unknown'}; remediate again`);
    }
    return stale.map((r) => r.id);
  }

  private track(p: Promise<unknown>): void {
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Waits for background detections and remediations (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }
}

/** A prediction in the contract's shape (plus project_id, status and the series it is about). */
export function predictionView(p: PredictionRecord) {
  return {
    id: p.id, type: p.type, severity: p.severity, project_id: p.projectId, status: p.status, series: p.seriesKey,
    detector: p.detector ?? 'capacity-ai', observed: p.detail.observed ?? false, confidence: p.confidence, description: p.description, predicted_impact: p.predicted_impact, recommended_action: p.recommended_action,
    predicted_at: p.predicted_at, will_occur_at: p.will_occur_at, earliest_at: p.earliest_at, updated_at: p.updated_at, resolved_at: p.resolved_at,
    execution_id: p.executionId,
  };
}

/** A remediation in the contract's shape (id, status, started_at, steps of name, status, progress) plus what it found. */
export function remediationView(r: RemediationRecord) {
  return {
    id: r.id, status: r.status, started_at: r.started_at, completed_at: r.completed_at, prediction_id: r.predictionId, project_id: r.projectId,
    options: r.options, error: r.error,
    steps: r.steps.map((s) => ({ name: s.name, status: s.status, progress: s.progress, reason: s.reason, execution_id: s.executionId, ...(s.detail ? { detail: s.detail } : {}) })),
  };
}
