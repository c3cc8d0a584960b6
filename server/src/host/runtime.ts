/**
 * Composition root shared by the language server and the standalone server: takes ownership of the
 * data directory (or attaches to its owner), opens config, store and audit trail, builds the engine
 * and serves HTTP. Nothing else lives here.
 */
import { INCLUDE_VENDORED_ENV } from '../skills/code-analysis/vendored';
import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { openAuditTrail, type JsonlAuditTrail } from '../audit/jsonl-audit-trail';
import { ApiKeys, type ApiKeyRecord, MAKE_KEY_HINT, weakKeyReason } from '../auth/api-keys';
import { Sessions, SESSIONS_COLLECTION, type SessionRecord } from '../auth/sessions';
import { loadConfig } from '../config/load';
import { deepFreeze, llmSchema, type CadreConfig, type LlmConfig } from '../config/schema';
import type { IntelligenceTier } from '../engine/catalog/enums';
import { findAction } from '../engine/catalog/index';
import type { AgentActionDoc } from '../http/openapi';
import { createEngine, type Engine } from '../engine/index';
import { runIsolationCheck, type IsolationFacts } from '../http/isolation/check';
import { COLLECTIONS } from '../engine/ports';
import { roleOf } from '../auth/roles';
import { createHttpServer, type HealthReport } from '../http/app';
import { IDEMPOTENCY_COLLECTION, IdempotencyStore, type IdempotencyRecord } from '../http/idempotency';
import { authRoutes, tenantRoutes } from '../http/routes/index';
import { DEFAULT_TENANT_ID } from '../engine/tenants/tenant-id';
import { engineRoutes } from '../http/routes/engine';
import { projectRoutes } from '../http/routes/projects';
import { inboundWebhookRoutes } from '../http/routes/inbound-webhooks';
import { AgentWorkers, defaultWorkerFile } from '../workers/agent-workers';
import { LOOPBACK, listenWithFallback } from '../http/listen';
import { reviewChecks } from '../skills/review-checks';
import { withCodeSyntax } from '../skills/coding/syntax';
import { releaseWorktrees, sweepWorktrees } from '../skills/coding/git';
import { createLanguageModel, RelayModel, TokenMeter, type LanguageModel, type RelayFunction } from '../llm/index';
import { openStore, storeFilePath, type Store } from '../store/lowdb-store';
import { STORE_VALIDATORS } from '../store/record-validators';
import { assertStorePresent } from '../store/missing-store';
import { auditHealth, storeAnchorPort, storeHealth } from '../store/store-health';
import { adminStoreRoutes } from '../http/routes/admin-store';
import { scheduleRetention } from '../store/retention';
import { FileAttachmentStore } from '../store/file-attachment-store';
import { JsonlEventLog } from '../store/jsonl-event-log';
import { createCallbackNotifier } from '../integrations/callback-notifier';
import { egressPolicyOf, startWebhooks } from '../webhooks/index';
import { urlRefusal } from '../net/egress-guard';
import { webhookRoutes } from '../http/routes/webhooks';
import { startGithubIntegration } from '../integrations/github/index';
import { skillModulesFromEnv } from './skill-modules';
import { FolderSettings } from './folder-settings';
import { mcpAuthMode, mcpRoutes } from '../mcp/mcp-route';
import { OwnerLock, type LockInfo } from './owner-lock';
import { allowReadPaths, isUnder, protectDataDir } from '../skills/workspace/files';

export const VERSION = '0.1.0';

export interface RuntimeOptions {
  dataDir: string;
  port: number;
  workspaceDir?: string | undefined;
  env: NodeJS.ProcessEnv;
  skillModules?: string[];
  log(line: string): void;
  /** Applied over the loaded YAML configuration (e.g. the editor's settings). */
  configOverrides?: ConfigOverrides;
  /** The editor's language model (used when the provider is `editor`). */
  editorRelay?: RelayFunction;
}

export interface ConfigOverrides {
  intelligence?: IntelligenceTier;
  llm?: {
    provider: 'none' | 'openai-compatible' | 'editor';
    baseUrl?: string;
    model?: string;
    /** The name of the environment variable holding the API key. */
    apiKeyEnv?: string;
  };
}

/**
 * The configuration with the overrides applied: `intelligence` replaces `defaults.intelligence`; `llm`
 * replaces the provider and, where given, base URL, model and key (read from the variable `apiKeyEnv`
 * names); the other `llm` keys stay as loaded. An `llm` override that does not validate (e.g.
 * openai-compatible without a base URL) is reported and ignored: the loaded `llm` section stays.
 */
export function applyConfigOverrides(config: CadreConfig, overrides: ConfigOverrides | undefined, env: NodeJS.ProcessEnv, log: (line: string) => void = () => {}): CadreConfig {
  if (!overrides || (!overrides.intelligence && !overrides.llm)) return config;
  let llm: LlmConfig = config.llm;
  const o = overrides.llm;
  if (o) {
    let apiKey = config.llm.api_key;
    if (o.apiKeyEnv) {
      apiKey = env[o.apiKeyEnv]?.trim() || undefined;
      if (!apiKey) log(`llm: the environment variable ${o.apiKeyEnv} is not set; requests are sent without an API key`);
    }
    const candidate = {
      provider: o.provider,
      ...(o.baseUrl ?? config.llm.base_url ? { base_url: o.baseUrl ?? config.llm.base_url } : {}),
      ...(o.model ?? config.llm.model ? { model: o.model ?? config.llm.model } : {}),
      ...(apiKey ? { api_key: apiKey } : {}),
      timeout_ms: config.llm.timeout_ms,
      max_retries: config.llm.max_retries,
    };
    const r = llmSchema.safeParse(candidate);
    if (r.success) llm = r.data;
    else log(`llm settings ignored (${r.error.issues.map((i) => `${i.path.join('.') || 'llm'}: ${i.message}`).join('; ')}); using the configuration file's llm.provider ${config.llm.provider}`);
  }
  return deepFreeze({
    ...config,
    defaults: overrides.intelligence ? { ...config.defaults, intelligence: overrides.intelligence } : config.defaults,
    llm,
  });
}

interface Common {
  url: string;
  port: number;
  dataDir: string;
  ownerPid: number;
  close(): Promise<void>;
}

/** This process owns the data directory and runs the engine. */
export interface OwnerRuntime extends Common {
  attached: false;
  engine: Engine;
  store: Store;
  audit: JsonlAuditTrail;
  keys: ApiKeys;
  /** A key created on this (first) start; shown once, never stored in clear. */
  newApiKey: string | null;
  configSource: string | null;
  /** The language model of the generative agents (`none` when not configured) and its token meter. */
  readonly languageModel: LanguageModel;
  tokenMeter: TokenMeter;
  /**
   * Applies the editor's settings (intelligence tier, language model) to the running engine, without
   * a restart: later executions and views use them, running executions go on. Returns what is in force.
   */
  reconfigure(overrides: ConfigOverrides): { intelligence: IntelligenceTier; llm: string };
}

/** Another live process owns the data directory; this one talks to it over HTTP. */
export interface AttachedRuntime extends Common {
  attached: true;
}

export type Runtime = OwnerRuntime | AttachedRuntime;

const SHUTDOWN_GRACE_MS = 3_000;
const APPROVAL_EXPIRY_INTERVAL_MS = 5_000;
const WARM_POOL_TICK_MS = 30_000;

/** The direct actions the skill modules provide, with their schemas from the listing, for the OpenAPI document. */
async function actionDocs(workers: AgentWorkers, any: boolean): Promise<AgentActionDoc[]> {
  if (!any) return [];
  const listing = await workers.discover().catch(() => []);
  return listing.flatMap((l) => {
    const def = findAction(l.agentId, l.action);
    if (!def) return [];
    return [{
      agentId: l.agentId, action: l.action, description: def.description,
      ...(l.inputJsonSchema ? { input: l.inputJsonSchema } : {}), ...(l.outputJsonSchema ? { output: l.outputJsonSchema } : {}),
    }];
  });
}

/** `file` lies in `dir` (resolved paths). */
function isInside(file: string, dir: string): boolean {
  return isUnder(path.resolve(file), path.resolve(dir));
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  // A weak CADRE_API_KEY (hunter2) would be an admin key anyone could guess: refused before anything starts.
  const envKey = opts.env['CADRE_API_KEY']?.trim();
  const weak = envKey ? weakKeyReason(envKey) : null;
  if (weak) throw new Error(`CADRE_API_KEY is not a generated Cadre key (${weak}); ${MAKE_KEY_HINT}`);
  const outcome = await OwnerLock.acquire(opts.dataDir, VERSION);
  if (!outcome.owner) return attach(opts, outcome.info);
  const lock = outcome.lock;
  try {
    return await startOwner(opts, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** The owner proved its lock token on its port (OwnerLock.acquire): this process talks to it. */
async function attach(opts: RuntimeOptions, info: LockInfo): Promise<Runtime> {
  const port = info.port!;
  const url = `http://${LOOPBACK}:${port}`;
  opts.log(`data directory ${opts.dataDir} is owned by pid ${info.pid} (it proved the lock's token); attached to ${url}`);
  return { attached: true, url, port, dataDir: opts.dataDir, ownerPid: info.pid, close: async () => {} };
}

async function startOwner(opts: RuntimeOptions, lock: OwnerLock): Promise<OwnerRuntime> {
  const started = Date.now();
  // No skill reads the data directory (store, audit trail, keys), in this thread or a worker.
  protectDataDir(opts.dataDir);
  const loaded = await loadConfig({ workspaceDir: opts.workspaceDir, cadreHome: opts.dataDir, env: opts.env });
  const config = applyConfigOverrides(loaded.config, opts.configOverrides, opts.env, opts.log);
  const source = loaded.source;
  // Folders outside the workspace skills may read: from the user's own config only (a repository's
  // .cadre.yaml must not widen what Cadre reads of the machine).
  const readPaths = config.security.read_paths;
  if (readPaths.length > 0 && source !== null && opts.workspaceDir && isInside(source, opts.workspaceDir)) {
    opts.log(`config: security.read_paths in ${source} ignored: only $CADRE_HOME/config.yaml may allow reading outside the workspace`);
    allowReadPaths([]);
  } else {
    allowReadPaths(readPaths);
  }
  // Same rule for the URLs observe-ai may fetch: a repository must not point Cadre at the user's network.
  // (The loaded config is frozen: the engine gets a copy without them, never an assignment that would throw at start.)
  const repoUrls = config.observe.urls.length > 0 && source !== null && opts.workspaceDir !== undefined && isInside(source, opts.workspaceDir);
  if (repoUrls) opts.log(`config: observe.urls in ${source} ignored: only $CADRE_HOME/config.yaml may allow fetching URLs`);
  // A repository's .cadre.yaml may not loosen the SSRF guard of webhooks and callbacks either.
  const fromRepo = source !== null && opts.workspaceDir !== undefined && isInside(source, opts.workspaceDir);
  const w = config.webhooks;
  if (fromRepo && (w.allow_loopback || w.allow_private || w.allow_http)) opts.log(`config: webhooks.allow_* in ${source} ignored: only $CADRE_HOME/config.yaml may allow loopback, private or http destinations`);
  const webhookConfig = fromRepo ? { ...w, allow_loopback: false, allow_private: false, allow_http: false } : w;
  // A repository's .cadre.yaml may add policy rules and waivers (reported as waived), never turn a baseline rule off.
  const repoDisables = fromRepo && config.policy.disable.length > 0;
  if (repoDisables) opts.log(`config: policy.disable in ${source} ignored: only $CADRE_HOME/config.yaml may turn a baseline policy rule off (a repository may waive one)`);
  const engineConfig = repoDisables || repoUrls
    ? { ...config, ...(repoDisables ? { policy: { ...config.policy, disable: [] } } : {}), ...(repoUrls ? { observe: { ...config.observe, urls: [] } } : {}) }
    : config;
  // Skills run in worker threads that inherit the environment: the setting reaches code analysis there.
  if (config.analysis.include_vendored) process.env[INCLUDE_VENDORED_ENV] = '1';
  else delete process.env[INCLUDE_VENDORED_ENV];
  // The one language model: skills in every worker reach it through their step's ctx.model.
  let languageModel = createLanguageModel(config.llm, { ...(opts.editorRelay ? { relay: opts.editorRelay } : {}) });
  const tokenMeter = new TokenMeter();
  if (languageModel.id !== 'none') opts.log(`language model: ${languageModel.id}${config.llm.model ? ` (${config.llm.model})` : ''}`);
  // A deleted store.json beside a remaining audit trail or event logs is refused, not replaced by an empty one.
  assertStorePresent(storeFilePath(opts.dataDir), opts.dataDir, opts.env);
  const store = await openStore({
    file: storeFilePath(opts.dataDir), onWriteError: (e) => opts.log(`store write failed: ${e.message}`), log: opts.log, validators: STORE_VALIDATORS,
  });
  const audit = await openAuditTrail({
    dir: path.join(opts.dataDir, 'audit'), onWarning: (w) => opts.log(`audit trail: ${w.message}`), anchor: storeAnchorPort(store),
    // Audit records ride the store's journal: a step's records, counters and checkpoint share one fsync.
    ...(store.auditJournal ? { journal: store.auditJournal() } : {}),
  });
  for (const alert of audit.alerts) opts.log(`audit trail: TAMPER EVIDENCE: ${alert}`);
  const eventLog = await JsonlEventLog.open(path.join(opts.dataDir, 'events'), (e) => opts.log(`event log write failed: ${e.message}`));
  // Skill modules run in worker threads, one per agent: warming an agent starts its worker.
  // The embedded skills come first; a module given by the user may replace one of them.
  const builtin = path.join(__dirname, 'skills.js');
  const modules = [...(existsSync(builtin) ? [builtin] : []), ...(opts.skillModules ?? []), ...skillModulesFromEnv(opts.env)];
  const workers = new AgentWorkers({ workerFile: defaultWorkerFile(), modules, log: opts.log });
  const skills = modules.length > 0 ? await workers.allSkills() : [];
  const workerAgents = new Set(skills.map((sk) => sk.agentId));
  const engine = createEngine({
    // JS/TS files are parsed by the syntax-valid gate too (generated code), where reviewChecks has no parser.
    store, audit, eventLog, config: engineConfig, checks: withCodeSyntax(reviewChecks), skills, notifier: createCallbackNotifier(egressPolicyOf(webhookConfig)), log: opts.log,
    warmUp: (id) => (workerAgents.has(id) ? workers.ensureWarm(id) : Promise.resolve()),
    coolDown: async (id) => void (workerAgents.has(id) ? await workers.coolDown(id) : undefined),
    // Worktrees of side effects a crash interrupted are removed at start-up (resumeInFlight) and after a failure.
    effectResources: { release: releaseWorktrees, sweep: sweepWorktrees },
    attachments: new FileAttachmentStore(path.join(opts.dataDir, 'attachments')),
    // Callbacks are signed with the owner's key hash, looked up when sent: the same after a restart.
    callbackSecret: (keyId) => store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys).get(keyId)?.hash ?? null,
    // Who may decide an approval through govern-ai: the role of a usable key, read when asked (a revocation counts at once).
    keys: {
      roleOf: (keyId) => {
        const r = store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys).get(keyId);
        return r && !r.revokedAt ? roleOf(r) : null;
      },
      activeKeys: () => store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys).list((r) => !r.revokedAt).length,
    },
    // A callbackUrl the SSRF guard refuses is a 400 at submission (and is checked again at connect time).
    callbackUrlRefusal: (url) => urlRefusal(url, egressPolicyOf(webhookConfig)),
    // A request without `source` works on the server's workspace (--workspace, the editor's folder).
    defaultWorkspace: () => opts.workspaceDir,
    // A tenant's `webhooks` quota counts its subscriptions (the webhooks are built below).
    webhookCount: (t) => webhooksRef?.service.countOf(t) ?? 0,
    // tenant-ai check-isolation probes the API this process serves (bound once it listens, below).
    isolationCheck: (req) => {
      if (!isolationRef) return Promise.reject(new Error('the HTTP server is not listening yet'));
      return isolationRef(req) as unknown as Promise<Record<string, unknown>>;
    },
    // Multi-root: an execution on another folder with its own .cadre.yaml runs with that file (host/folder-settings.ts).
    folderSettings: (source) => folderSettings.of(source),
  });
  let isolationRef: ((req: { tenantId: string; now: number }) => Promise<IsolationFacts>) | null = null;
  let webhooksRef: ReturnType<typeof startWebhooks> | null = null;
  // The meter keeps an execution's totals only while it runs: a finished execution is forgotten.
  engine.bus.subscribe('engine.event', (e) => tokenMeter.forgetFinished(e));
  const useModel = (model: LanguageModel) =>
    engine.rigor.useLanguageModel({
      model,
      meter: tokenMeter,
      // An editor relay that is not connected yet counts as no model: agents behave as with `none`.
      available: () => !(model instanceof RelayModel) || model.connected,
    });
  useModel(languageModel);
  // The editor's settings applied live (lsp/language-server.ts): only the tier and the llm section
  // change, from the same loaded file the overrides were first applied to (with its guards above).
  let overridesNow = opts.configOverrides;
  // The whole config as the engine runs on it (the engine sees only its EngineSettings part).
  let liveConfig: CadreConfig = engineConfig;
  const folderSettings = new FolderSettings({
    engineConfig: () => liveConfig, engineFolder: opts.workspaceDir, intelligence: () => overridesNow?.intelligence, env: opts.env, log: opts.log,
  });
  const reconfigure = (overrides: ConfigOverrides) => {
    const next = applyConfigOverrides(loaded.config, overrides, opts.env, opts.log);
    const llmChanged = JSON.stringify(next.llm) !== JSON.stringify(liveConfig.llm);
    liveConfig = deepFreeze({ ...liveConfig, defaults: { ...liveConfig.defaults, intelligence: next.defaults.intelligence }, llm: next.llm });
    engine.reconfigure(liveConfig);
    if (llmChanged) {
      languageModel = createLanguageModel(next.llm, { ...(opts.editorRelay ? { relay: opts.editorRelay } : {}) });
      useModel(languageModel);
    }
    if (JSON.stringify(overrides) !== JSON.stringify(overridesNow)) opts.log(`settings applied: intelligence ${next.defaults.intelligence}, language model ${languageModel.id}${llmChanged ? ' (changed)' : ''}`);
    overridesNow = overrides;
    return { intelligence: next.defaults.intelligence, llm: languageModel.id };
  };
  // Outbound webhooks: every service.event published on the bus becomes durable deliveries (server/src/webhooks).
  const webhooks = startWebhooks({
    store, bus: engine.bus, config: webhookConfig, log: opts.log,
    // An event goes to its tenant's subscriptions only: its own tenantId, else its execution's.
    tenantOfEvent: (e) => e.tenantId ?? (e.executionId ? engine.executions.tenantOfExecution(e.executionId) : undefined) ?? DEFAULT_TENANT_ID,
    admitTenant: (t) => engine.tenants.admit(t, 'webhook'),
    onDisabled: (w) => {
      // The editor shows it (lsp/language-server.ts); no subscription can list this name, so it is never delivered.
      engine.bus.publish('service.event', { event: 'webhook.disabled', data: { webhook_id: w.id, url: w.url, reason: w.disabledReason } });
      void audit.append({ kind: 'webhook.disabled', actor: 'engine', data: { webhookId: w.id, url: w.url, reason: w.disabledReason } })
        .catch((err: unknown) => opts.log(`audit of webhook ${w.id} disabled failed: ${(err as Error).message}`));
    },
  });
  webhooksRef = webhooks;
  // Tenants: the default tenant holds everything of a single-user install and of a store from before tenants.
  await engine.tenants.ensureDefault();
  const keys = new ApiKeys(store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys));
  const migrated = await keys.migrate();
  if (migrated.roles > 0) opts.log(`API keys: ${migrated.roles} key(s) stored before roles existed are admin keys`);
  if (migrated.masked.length > 0) opts.log(`API keys: ${migrated.masked.join(', ')} were not generated keys (a weak CADRE_API_KEY); revoked, their prefix hidden`);
  // CADRE_API_KEY and the first-start key are admin keys (checked above: in the generated form).
  const envKey = opts.env['CADRE_API_KEY']?.trim();
  if (envKey) await keys.adopt(envKey, 'CADRE_API_KEY');
  const newApiKey = keys.none() ? (await keys.create('first start', 'enterprise', 'admin')).key : null;

  const health = (): HealthReport => ({
    status: store.closed || audit.alerts.length > 0 ? 'degraded' : 'ok',
    service: 'cadre',
    version: VERSION,
    pid: process.pid,
    uptime_s: Math.round((Date.now() - started) / 1000),
    components: {
      store: storeHealth(store),
      audit: auditHealth(audit),
      config: { status: 'ok', detail: source ?? 'defaults' },
    },
    memory: { rss_bytes: 0, heap_used_bytes: 0, worker_threads: workers.workerCount(), warm_agents: workers.liveAgents().length },
  });
  // GitHub App integrations: registrations, secrets, the ACMF-gated PR flow and the incident chain (docs/integrations.md).
  const github = startGithubIntegration({ engine, store, audit, dataDir: opts.dataDir, env: opts.env, defaultWorkspace: () => opts.workspaceDir, log: opts.log });
  // HTTP: the built-in routes (health, info, openapi), sessions and key management; engine routes join the list.
  const sessions = new Sessions(store.collection<SessionRecord>(SESSIONS_COLLECTION), keys);
  const server: Server = createHttpServer(
    {
      version: VERSION, health, log: opts.log, keys, sessions, server: config.defaults.server,
      agentActions: await actionDocs(workers, modules.length > 0),
      idempotency: new IdempotencyStore(store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION)),
      lockProof: (nonce) => lock.proof(nonce),
    },
    [...authRoutes({ keys, sessions }), ...tenantRoutes({ engine, keys }), ...engineRoutes({ engine, keys }), ...webhookRoutes({ webhooks: webhooks.service }), ...adminStoreRoutes({ store, dataDir: opts.dataDir, audit }),
      ...projectRoutes({ engine }), ...inboundWebhookRoutes({ engine, config }), ...github.routes,
      // The MCP server on the same port (docs/mcp.md): its tools call this engine directly.
      ...mcpRoutes({
        engine, keys, attachments: new FileAttachmentStore(path.join(opts.dataDir, 'attachments')), defaultWorkspace: () => opts.workspaceDir,
        version: VERSION, log: opts.log, corsOrigins: config.defaults.server?.cors_origins ?? [], unauthenticated: mcpAuthMode(opts.env) === 'none',
      })],
  );
  const port = await listenWithFallback(server, opts.port, opts.log);
  lock.setPort(port);
  isolationRef = (req) => runIsolationCheck({ url: () => `http://${LOOPBACK}:${port}`, engine, keys, log: opts.log }, req);
  // Executions that were in flight when the last owner stopped or died go on from their checkpoints.
  const resumed = await engine.executions.resumeInFlight();
  if (resumed.length > 0) opts.log(`resumed ${resumed.length} execution(s) in flight`);
  // Remediations a stop interrupted end failed (remediate again); inbound deliveries left pending are processed.
  const interrupted = await engine.projects.closeInterrupted();
  if (interrupted.length > 0) opts.log(`remediations interrupted by the last stop: ${interrupted.join(', ')}`);
  engine.inbound.resumePending();
  github.resume();
  // Terminal executions, their events and audit days past the retention leave for compressed archives.
  const stopRetention = scheduleRetention({
    store, dataDir: opts.dataDir, maxAgeDays: config.store.retention_days, maxExecutions: config.store.retention_executions, log: opts.log,
  });
  // A record changed mid-file shows only in a full verification: run one in the background at start.
  audit.verify().then(
    (v) => void (v.ok ? undefined : opts.log(`audit trail: TAMPER EVIDENCE: ${v.firstBroken!.reason} (${v.firstBroken!.file}:${v.firstBroken!.line})`)),
    (err: unknown) => opts.log(`audit trail: start-up verification failed: ${(err as Error).message}`),
  );

  // The engine starts no timers: approvals past their deadline expire, and the warm pool applies
  // business hours and idle scale-to-zero, on the host's ticks.
  const expiry = setInterval(() => {
    engine.acmf.expireDue().catch((err: unknown) => opts.log(`approval expiry failed: ${(err as Error).message}`));
  }, APPROVAL_EXPIRY_INTERVAL_MS);
  expiry.unref();
  engine.fleet.warm.tick();
  const warmTick = setInterval(() => engine.fleet.warm.tick(), WARM_POOL_TICK_MS);
  warmTick.unref();

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      clearInterval(expiry);
      clearInterval(warmTick);
      stopRetention();
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      // In-flight requests get a moment to finish; then the remaining sockets are cut.
      const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await stopped;
      clearTimeout(grace);
      github.stop();
      // Running executions stop unmarked and resume on the next start.
      await engine.executions.close();
      await webhooks.close();
      await workers.close();
      await eventLog.flush();
      // The trail first: its records ride the store's journal, and it fsyncs its day files at close.
      await audit.close();
      await store.close();
      lock.release();
    })());

  return {
    attached: false, url: `http://${LOOPBACK}:${port}`, port, dataDir: opts.dataDir, ownerPid: process.pid,
    engine, store, audit, keys, newApiKey, configSource: source, tokenMeter, close, reconfigure,
    get languageModel() {
      return languageModel;
    },
  };
}
