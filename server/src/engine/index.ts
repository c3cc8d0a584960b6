/**
 * The Cadre engine: catalog, ACMF, the RIGOR pipeline, the message bus and execution events, wired
 * from narrow ports. It knows nothing of VS Code, HTTP or LSP; the doors adapt it.
 *
 * @example
 * const engine = createEngine({ store, audit, config, checks: reviewChecks, log: console.error });
 * engine.skills.add(mySkill);
 * const result = await engine.rigor.runStep({ executionId: 'exec_1', step: 0, agentId: 'review-ai', ... });
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { EngineEvent } from '../../../protocol/events';
import { AcmfService, type AcmfSettings } from './acmf/acmf-service';
import { minMode } from './acmf/policy';
import type { AcmfMode } from './catalog/enums';
import { LOCAL_SUBSCRIPTION, type Subscription } from './catalog/subscription';
import type { AgentAcmfState, ApprovalRecord } from './acmf/records';
import { MessageBus } from './bus';
import { effectiveThreshold, GATES } from './catalog/gates';
import { ExecutionEvents } from './execution-events';
import type { EventLog } from './executions/event-log';
import { ExecutionService, type CallbackNotifier } from './executions/execution-service';
import { ReadinessService } from './executions/readiness-service';
import type { EffectResourcesPort } from './executions/side-effect-ledger';
import type { RetryPolicy } from './resilience/retry';
import { AgentFleet } from './executions/agent-fleet';
import { type AttachmentStore, type AuditTrail, type Clock, type CollectionStore, COLLECTIONS, systemClock } from './ports';
import { GATE_EVALUATORS, type GateCheck } from './rigor/gate-evaluators';
import { RigorPipeline, type AutonomyPort, type GateSpec } from './rigor/pipeline';
import type { ReviewChecks } from './rigor/review-subject';
import { createSkillRegistry, type Skill } from './rigor/skill';
import { ServiceEvents } from './events/service-events';
import { ProjectService } from './projects/project-service';
import { InboundService } from './incidents/inbound-service';
import { PIPELINE_EVENTS_COLLECTION, PipelineEvents, type PipelineEventRecord } from './pr-flow/pipeline-events';
import type { KeyAuthority } from './governance/approval-facts';
import { governanceStepFacts } from './governance/step-facts';
import { Adaptations, tightened, type ApplyingEntry } from './governance/adaptations';
import { TenantService } from './tenants/tenant-service';
import { DEFAULT_TENANT_ID, tenantOf } from './tenants/tenant-id';
import { tenantStampedAudit } from './tenants/tenant-audit';
import { executionTenants } from './governance/audit-tenant';
import { EngineError } from './errors';
import { agentSettings, type EngineSettings } from './settings';

export interface EngineDeps {
  store: CollectionStore;
  audit: AuditTrail;
  /** Per-execution event log (SSE replay); absent in tests that do not replay. */
  eventLog?: EventLog;
  notifier?: CallbackNotifier;
  /** Removes what interrupted side effects left (temporary worktrees); see executions/side-effect-ledger.ts. */
  effectResources?: EffectResourcesPort;
  /** Attachment files for step outputs too large for the execution record. */
  attachments?: AttachmentStore;
  /** The secret signing the callbacks of an API key (its SHA-256 hex), looked up at delivery time. */
  callbackSecret?(keyId: string): string | null;
  /** The SSRF guard's verdict on a task's callbackUrl (null: allowed). */
  callbackUrlRefusal?(url: string): string | null;
  retry?: Partial<RetryPolicy>;
  escalationTimeoutMs?: number;
  /** Brings an agent's worker up / down (warm pool); default nothing to start in process. */
  warmUp?(agentId: string): Promise<void>;
  coolDown?(agentId: string): Promise<void> | void;
  /** The configuration file's settings the engine reads (server/src/config gives its validated `CadreConfig`). */
  config: EngineSettings;
  /**
   * The settings of executions on a folder that has its own configuration file (multi-root: each folder's
   * `.cadre.yaml`), or undefined when `config` applies; throws ERR_CONFIG_INVALID for an invalid file.
   * The host reads and guards the files (host/folder-settings.ts); absent: `config` everywhere.
   */
  folderSettings?(source: string): EngineSettings | undefined;
  checks: ReviewChecks;
  clock?: Clock;
  skills?: Skill[];
  /** The workspace of requests that name no `source` (the server's `--workspace`, the editor's folder). */
  defaultWorkspace?: () => string | undefined;
  /** Outbound webhook subscriptions of a tenant (its `webhooks` quota); the webhooks live outside the engine. */
  webhookCount?(tenantId: string): number;
  /** Roles of API keys (the host's, server/src/auth): who may decide an approval through govern-ai. */
  keys?: KeyAuthority;
  /** tenant-ai check-isolation's probes through the host's real API (server/src/http/isolation). */
  isolationCheck?(req: { tenantId: string; now: number }): Promise<Record<string, unknown>>;
  log(line: string): void;
}

/** The configured subscription, or a local install's (every product, every commercial tag). */
export function subscriptionOf(config: EngineSettings): Subscription {
  const s = config.subscription;
  return s ? { products: s.products, commercialTier: s.tier } : LOCAL_SUBSCRIPTION;
}

/** Ids like `exec_4f3a...`: a prefix and 12 random bytes in hex. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

const MAX_PATTERNS_PER_AGENT = 50;

/** An in-memory event log for engines without a data directory (tests, benchmarks). */
function memoryEventLog(): EventLog {
  const logs = new Map<string, EngineEvent[]>();
  return {
    append: (e) => void (logs.get(e.execution_id) ?? logs.set(e.execution_id, []).get(e.execution_id)!).push(e),
    read: async (id, after) => (logs.get(id) ?? []).filter((e) => e.seq > after),
    lastSeq: async (id) => logs.get(id)?.at(-1)?.seq ?? 0,
    flush: async () => {},
  };
}

/** Approvals whose tenant is looked up execution by execution; more go through one pass over the summaries. */
const APPROVAL_LOOKUPS = 32;

export function createEngine(deps: EngineDeps) {
  const clock = deps.clock ?? systemClock;
  // Executions are built below; the audit stamp and the tenants reach them lazily.
  let executions: ExecutionService | null = null;
  let projectsRef: ProjectService | null = null;
  // Every audit record about an execution carries the execution's tenant (covered by the chain's hash).
  const audit = tenantStampedAudit(deps.audit, (id) => executions?.tenantOfExecution(id));
  const tenants = new TenantService({
    store: deps.store, clock, newId: (p) => newId(p),
    installSubscription: () => subscriptionOf(deps.config),
    usage: (t) => ({ ...(executions?.tenantUsage(t) ?? { executionsLast24h: 0, activeExecutions: 0 }), projects: projectsRef?.countOf(t) ?? 0, webhooks: deps.webhookCount?.(t) ?? 0 }),
  });
  const bus = new MessageBus((err, topic) => deps.log(`bus subscriber of ${topic} failed: ${(err as Error)?.message ?? String(err)}`));
  const eventLog: EventLog = deps.eventLog ?? memoryEventLog();
  const events = new ExecutionEvents(bus, clock, eventLog, (err) => deps.log(`event listener failed: ${(err as Error)?.message ?? String(err)}`));
  const skills = createSkillRegistry(deps.skills ?? []);
  const settingsIn = (config: EngineSettings, agentId: string): AcmfSettings => {
    const s = agentSettings(config, agentId);
    const toAutonomous = s.progression.toAutonomous;
    return {
      acmfMode: s.acmfMode,
      approvalRequiredFor: s.approvalRequiredFor,
      protectedPaths: [...config.defaults.protected_paths],
      toAssisted: s.progression.toAssisted,
      toAutonomous: toAutonomous.enabled ? toAutonomous : null,
    };
  };
  const settings = (agentId: string): AcmfSettings => settingsIn(deps.config, agentId);
  // Multi-root: the one place where an execution's folder picks its settings (docs/decisions.md).
  /** The settings of a folder with its own configuration file, else undefined (the engine's apply). */
  const folderConfig = (source: string | null | undefined): EngineSettings | undefined => (source && deps.folderSettings ? deps.folderSettings(source) : undefined);
  const folderOfExecution = (executionId: string | undefined): EngineSettings | undefined =>
    executionId && deps.folderSettings ? folderConfig(executions?.find(executionId)?.request.source) : undefined;
  const configOf = (executionId: string | undefined): EngineSettings => folderOfExecution(executionId) ?? deps.config;
  /**
   * A folder's acmf_mode for an agent caps that folder's executions when it is stricter than the engine's
   * configured mode: a repository may ask for more caution, never for more autonomy than the agent earned.
   */
  const folderCap = (folder: EngineSettings | undefined, agentId: string, cap: AcmfMode | undefined): AcmfMode | undefined => {
    if (!folder) return cap;
    const mine = agentSettings(folder, agentId).acmfMode;
    const engine = agentSettings(deps.config, agentId).acmfMode;
    const stricter = mine !== engine && minMode(mine, engine) === mine ? mine : undefined;
    return stricter && cap ? minMode(stricter, cap) : stricter ?? cap;
  };
  const acmf = new AcmfService({
    agents: deps.store.collection<AgentAcmfState>(COLLECTIONS.agents),
    approvals: deps.store.collection<ApprovalRecord>(COLLECTIONS.approvals),
    audit,
    bus,
    clock,
    settings,
    newId: () => newId('appr'),
  });
  // What adapt-ai proposed and ACMF let through: tighter gates per agent, a tenant's suppressed findings.
  const adaptations = new Adaptations({ store: deps.store, clock, acmf, log: deps.log });

  // Patterns published in Optimize, kept per agent so the next execution can use them.
  const learned = new Map<string, string[]>();
  bus.subscribe('learning.pattern.detected', (p) => {
    const list = learned.get(p.agentId) ?? [];
    if (!list.includes(p.pattern)) list.push(p.pattern);
    if (list.length > MAX_PATTERNS_PER_AGENT) list.shift();
    learned.set(p.agentId, list);
  });

  const isProbeRun = (executionId: string): boolean => {
    const t = executions?.tenantOfExecution(executionId);
    return t !== undefined && t !== DEFAULT_TENANT_ID && tenants.find(t)?.probe === true;
  };
  const autonomy: AutonomyPort = {
    evaluate: (agentId, actions, scope, cap, executionId) => {
      const folder = folderOfExecution(executionId);
      return acmf.evaluate(agentId, actions, scope, folderCap(folder, agentId, cap), folder ? settingsIn(folder, agentId) : undefined);
    },
    requestApproval: async ({ executionId, agentId, decision }) => {
      // A step re-run after a restart finds the approval it asked for before, and waits on that one.
      const earlier = acmf.listApprovals({ executionId, agentId }).find((a) => a.status !== 'denied' && a.status !== 'expired' && a.status !== 'closed' && a.action.kind === decision.action.kind && a.action.description === decision.action.description);
      return earlier ?? acmf.requestApproval({ executionId, agentId, action: decision.action, risk: decision.risk, reasons: decision.reasons });
    },
    waitForDecision: (id, signal) => acmf.waitForDecision(id, signal),
    // A run of a probe tenant (tenant-ai check-isolation's) is no evidence about the agent: its mode is earned on real work only.
    recordOutcome: async (agentId, outcome) => void (isProbeRun(outcome.executionId) ? undefined : await acmf.recordOutcome(agentId, outcome)),
    recordOutcomeStaged: async (agentId, outcome) => ({ durable: isProbeRun(outcome.executionId) ? Promise.resolve() : (await acmf.recordOutcomeStaged(agentId, outcome)).durable }),
    strictness: (agentId) => acmf.strictness(agentId),
    effectiveMode: async (agentId, requested, executionId) => {
      const mode = (await acmf.state(agentId)).mode;
      const cap = folderCap(folderOfExecution(executionId), agentId, requested);
      return cap ? minMode(mode, cap) : mode;
    },
    protectedPaths: (agentId, executionId) => settingsIn(configOf(executionId), agentId).protectedPaths,
  };

  const gates: GateSpec[] = GATES.map((g) => {
    if (!(g.check in GATE_EVALUATORS)) throw new Error(`gate ${g.id}: no evaluator for check "${g.check}"`);
    return { id: g.id, number: g.number, category: g.category, check: g.check as GateCheck };
  });
  const gateDefs = new Map(GATES.map((g) => [g.id, g]));
  // The ledger lives with the executions; the pipeline reaches it lazily (they are built in turn).
  const rigor = new RigorPipeline({
    skills,
    autonomy,
    audit,
    clock,
    gates,
    threshold: (gateId, ctx, agentId) => {
      const def = gateDefs.get(gateId)!;
      const base = effectiveThreshold(def, ctx);
      // An adaptation only tightens: the stricter of the scope's threshold and the adapted ones.
      return tightened(def.comparison, base, base === null || !agentId ? [] : adaptations.thresholdFor(agentId, gateId));
    },
    checks: deps.checks,
    policies: (executionId) => configOf(executionId).defaults.policies.map((p) => ({ ...p })),
    deniedLicenses: (executionId) => [...configOf(executionId).defaults.denied_licenses],
    emit: (e) => {
      executions?.observe(e);
      events.emit(e);
    },
    learnedPatterns: (agentId) => learned.get(agentId) ?? [],
    publishPattern: (agentId, executionId, pattern) => bus.publish('learning.pattern.detected', { agentId, executionId, pattern, detail: {} }),
    sideEffects: { once: (...args) => executions!.sideEffects.once(...args) },
  });
  const fleet = new AgentFleet({
    clock, log: deps.log,
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.warmUp ? { warmUp: deps.warmUp } : {}),
    ...(deps.coolDown ? { coolDown: deps.coolDown } : {}),
  });
  // The contract's webhook events of each step, published on 'service.event' (the outbound webhooks subscribe).
  const serviceEvents = new ServiceEvents({ bus, store: deps.store, clock, severityThreshold: () => deps.config.webhooks?.severity_threshold ?? 'high', log: deps.log });
  // Read per request: `reconfigure` changes them for later executions (a running one keeps what it started with).
  const defaults = { intelligence: deps.config.defaults.intelligence, scope: deps.config.defaults.scope };
  executions = new ExecutionService({
    stepObserver: serviceEvents,
    fleet,
    store: deps.store, rigor, acmf, events, eventLog, clock,
    defaults,
    defaultsFor: (source) => {
      const folder = folderConfig(source);
      return folder ? { intelligence: folder.defaults.intelligence, scope: folder.defaults.scope } : undefined;
    },
    newId,
    sign: (body, secret) => createHmac('sha256', secret).update(body, 'utf8').digest('hex'),
    ...(deps.notifier ? { notifier: deps.notifier } : {}),
    ...(deps.effectResources ? { effectResources: deps.effectResources } : {}),
    ...(deps.attachments ? { attachments: deps.attachments } : {}),
    ...(deps.callbackSecret ? { callbackSecret: deps.callbackSecret } : {}),
    ...(deps.callbackUrlRefusal ? { callbackUrlRefusal: deps.callbackUrlRefusal } : {}),
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.escalationTimeoutMs ? { escalationTimeoutMs: deps.escalationTimeoutMs } : {}),
    readinessFacts: (t) => readiness.facts(t),
    subscription: (t) => tenants.subscriptionOf(t),
    admitTenant: (t) => tenants.admit(t, 'execution'),
    ...(deps.defaultWorkspace ? { defaultWorkspace: deps.defaultWorkspace } : {}),
    settingsFor: (agentId, source) => {
      const config = folderConfig(source) ?? deps.config;
      return agentId === 'observe-ai' ? observeSettings(config) : agentId === 'policy-ai' ? structuredClone(config.policy) as unknown as Record<string, unknown> : undefined;
    },
    // Facts only the engine has (audit trail, approvals, feedback, executions) for GOVERN and EVOLVE steps, per tenant.
    stepFacts: governanceStepFacts({
      store: deps.store, audit, acmf, clock, executions: () => executions!, ...(deps.keys ? { keys: deps.keys } : {}),
      selfApprovalSetting: () => deps.config.security?.self_approval, defaultScope: () => deps.config.defaults.scope, tenants: () => tenants,
      ...(deps.isolationCheck ? { isolationCheck: deps.isolationCheck } : {}),
      adaptations,
    }),
    log: deps.log,
  });

  // The second API surface (projects, predictions, remediations) and inbound third-party events.
  const projects = new ProjectService({
    store: deps.store, bus, executions, audit, clock, newId, log: deps.log, ...(deps.attachments ? { attachments: deps.attachments } : {}),
    admitTenant: (t) => tenants.admit(t, 'project'),
  });
  projectsRef = projects;
  // adapt-ai evaluate steps that ended with changes ACMF let through: applied once the execution has ended
  // (its record is durable by then); applyFrom is idempotent, so a repeated event changes nothing.
  bus.subscribe('engine.event', (e) => {
    if (e.type !== 'execution_completed' && e.type !== 'execution_failed') return;
    const rec = executions!.find(e.execution_id);
    for (const st of rec?.steps ?? []) {
      if (st.agentId !== 'adapt-ai' || st.action !== 'evaluate' || st.outcome !== 'completed') continue;
      const out = st.output as { applying?: ApplyingEntry[]; data?: { applying?: ApplyingEntry[] } } | null;
      const applying = out?.applying ?? out?.data?.applying ?? [];
      if (applying.length === 0) continue;
      adaptations.applyFrom(rec!.id, tenantOf(rec!), applying).then(
        (done) => { for (const a of done) deps.log(`adaptation applied: ${a.change} (${a.by}, ${a.executionId})`); },
        (err: unknown) => deps.log(`adaptations of ${rec!.id} not applied: ${(err as Error).message}`),
      );
    }
  });
  const inbound = new InboundService({
    store: deps.store, bus, executions, audit, clock, log: deps.log,
    trackerMapping: () => ({ ...deps.config.integrations.tracker.projects.mapping }),
  });
  // The incident chain's topics on each tenant's service stream (SSE without execution_id).
  const pipelineEvents = new PipelineEvents({ bus, records: deps.store.collection<PipelineEventRecord>(PIPELINE_EVENTS_COLLECTION), executions, clock, log: deps.log });
  pipelineEvents.start();

  /** Approvals as a tenant sees them: an approval belongs to its execution's tenant. */
  const approvals = {
    list: (tenantId: string, filter: Parameters<AcmfService['listApprovals']>[0] = {}) => {
      const all = acmf.listApprovals(filter);
      // A few (pending ones: their executions are in memory) are looked up one by one; a long list (decided
      // ones of ended executions, which would each be read from disk) through one pass over the in-memory summaries.
      const tenants = all.length > APPROVAL_LOOKUPS ? executionTenants(deps.store) : null;
      return all.filter((a) => (tenants ? tenants.get(a.executionId) : executions!.tenantOfExecution(a.executionId)) === tenantId);
    },
    get: (tenantId: string, id: string) => {
      const a = acmf.getApproval(id);
      if (executions!.tenantOfExecution(a.executionId) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no approval ${id}`, { details: { id } });
      return a;
    },
  };

  // Deployment readiness, one service for every door (REST's direct action, LSP, MCP).
  const readiness: ReadinessService = new ReadinessService({
    list: (filter) => executions!.list(filter), rigor,
    pendingApprovals: (t) => approvals.list(t, { status: 'pending' }).length,
    runAction: (agentId, action, payload, who) => executions!.runAction(agentId, action, payload, who),
    whenSettled: (id, wait) => executions!.whenSettled(id, wait),
  });

  /**
   * Settings changed while the engine runs (the editor's intelligence tier): later executions, views
   * and every port that reads the configuration per call see `next`; running executions keep the
   * tier they were planned with. The language model is swapped separately (rigor.useLanguageModel).
   */
  const reconfigure = (next: EngineSettings): void => {
    deps.config = next;
    defaults.intelligence = next.defaults.intelligence;
    defaults.scope = next.defaults.scope;
  };

  return {
    bus, events, acmf, rigor, skills, executions, readiness, fleet, projects, inbound, pipelineEvents, tenants, approvals, audit: deps.audit, clock, reconfigure,
    get config(): EngineSettings {
      return deps.config;
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;

/**
 * What observe-ai may use of the install's settings, without a secret: the URL prefixes it may fetch,
 * the configured alert rules, and what the monitoring integrations say (read and reported; their
 * cloud APIs are not called by this version).
 */
export function observeSettings(config: EngineSettings): Record<string, unknown> {
  const cm = config.integrations.cloud_monitoring;
  const apm = config.integrations.apm;
  return {
    urls: [...config.observe.urls],
    alertRules: config.observe.alert_rules.map((r) => ({ ...r })),
    cloudMonitoring: { enabled: cm.enabled, region: cm.region ?? null, namespaces: [...cm.metrics.namespaces], periodS: cm.metrics.period, logGroups: [...cm.logs.groups] },
    apm: { enabled: apm.enabled, site: apm.site ?? null, serviceName: apm.apm.service_name ?? null, metricsPrefix: apm.metrics.prefix ?? null },
  };
}
