/**
 * The GitHub integrations of this server: registration (with the credential and permission checks),
 * the source-host port the engine's PR flow calls, and the state the inbound webhooks feed (CI results
 * per head commit, seen deliveries). One `GithubApi` per integration is kept, so auth-app's installation
 * token cache lives as long as the server; it is rebuilt when the secret or the record changes.
 */
import { DEFAULT_TENANT_ID, tenantOf } from '../../engine/tenants/tenant-id';
import { randomBytes } from 'node:crypto';
import type { CollectionStore, Repository } from '../../engine/ports';
import type { CiSummary, HostIntegration, HostPull, LocalCommit, SourceHostPort } from '../../engine/pr-flow/ports';
import { integrationSecretName, type SecretStore } from '../../secrets/secret-store';
import { parseGithubCredential, type GithubAppCredential } from './credentials';
import { IntegrationError, isIntegrationError } from './errors';
import { DEFAULT_API_URL, GithubApi, type GithubApiOptions } from './github-api';
import { localChanges } from './local-commit';
import { INTEGRATIONS_COLLECTION, PR_CAPABLE, type GithubIntegrationRecord, type RegisterGithub } from './registrations';

export interface CiRecord {
  /** `<integrationId>:<headSha>`. */
  id: string;
  integrationId: string;
  headSha: string;
  runs: Record<string, { name: string; kind: string; status: string; conclusion: string | null; at: string }>;
  updatedAt: string;
}
/**
 * A delivery seen: `pending` (with its payload) until processed, then `done` (payload dropped). A stop
 * between the 200 and the processing leaves it pending, and the next start processes it; a redelivery
 * of a seen id is a duplicate either way.
 */
export interface DeliveryRecord { id: string; event: string; integrationId: string; at: string; status?: 'pending' | 'done'; payload?: Record<string, unknown> }

export const CI_COLLECTION = 'githubCiResults';
export const DELIVERIES_COLLECTION = 'githubDeliveries';
const MAX_DELIVERIES = 5_000;

export interface GithubIntegrationsDeps {
  store: CollectionStore;
  secrets: SecretStore;
  /** `<namespace>/integrations/<customer_id>/github` when a registration names no secret. */
  namespace: string;
  customerId: string;
  /** The server's default workspace (a PR's local commit without `source`). */
  defaultWorkspace(): string | undefined;
  api?: GithubApiOptions;
  log(line: string): void;
  now?: () => number;
}

export class GithubIntegrations implements SourceHostPort {
  readonly host = 'github';
  readonly records: Repository<GithubIntegrationRecord>;
  readonly ciResults: Repository<CiRecord>;
  readonly deliveries: Repository<DeliveryRecord>;
  private readonly apis = new Map<string, Promise<GithubApi>>();

  constructor(private readonly deps: GithubIntegrationsDeps) {
    this.records = deps.store.collection<GithubIntegrationRecord>(INTEGRATIONS_COLLECTION);
    this.ciResults = deps.store.collection<CiRecord>(CI_COLLECTION);
    this.deliveries = deps.store.collection<DeliveryRecord>(DELIVERIES_COLLECTION);
  }

  /** The customer id of a tenant in secret names: the install's (CADRE_CUSTOMER_ID) for the default tenant, else the tenant id. */
  customerIdOf(tenantId: string = DEFAULT_TENANT_ID): string {
    return tenantId === DEFAULT_TENANT_ID ? this.deps.customerId : tenantId;
  }

  defaultSecretName(tenantId: string = DEFAULT_TENANT_ID): string {
    return integrationSecretName(this.deps.namespace, this.customerIdOf(tenantId), 'github');
  }

  /**
   * Why `tenantId` may not use the secret `name`, or null. A tenant other than the default one reads
   * and writes only secrets under its own `<namespace>/integrations/<tenant id>/`, so it can neither
   * overwrite nor borrow another tenant's GitHub credential.
   */
  secretNameRefusal(tenantId: string, name: string): string | null {
    if (tenantId === DEFAULT_TENANT_ID) return null;
    const own = `${this.deps.namespace}/integrations/${tenantId}/`;
    return name.startsWith(own) ? null : `a key of tenant ${tenantId} may only use secrets named ${own}<host>`;
  }

  /** Agents that are not PR-capable, in the order given (the route answers 422 naming them). */
  static notPrCapable(agents: readonly string[]): string[] {
    return agents.filter((a) => !PR_CAPABLE.includes(a));
  }

  /** Validates, verifies (unless `verify: false`) and stores a registration. */
  async register(body: RegisterGithub, createdBy: string, tenantId: string = DEFAULT_TENANT_ID): Promise<GithubIntegrationRecord> {
    const dup = this.records.list((r) => r.repo.toLowerCase() === body.github_repo.toLowerCase() && r.integrationName === body.integration_name)[0];
    if (dup) throw new IntegrationError('github_error', `an integration named "${body.integration_name}" for ${body.github_repo} exists already (${dup.id})`, { conflict: dup.id });
    const now = this.iso();
    const rec: GithubIntegrationRecord = {
      id: `int_${randomBytes(12).toString('hex')}`, tenantId, host: 'github', integrationName: body.integration_name, repo: body.github_repo,
      installationId: body.github_installation_id, secretName: body.secrets_manager_arn ?? this.defaultSecretName(tenantId),
      apiUrl: (body.api_url ?? DEFAULT_API_URL).replace(/\/+$/, ''), agents: [...new Set(body.config.agents)], requireReview: body.config.require_review,
      appId: null, permissions: null, verifiedAt: null, lastError: null, createdAt: now, createdBy,
    };
    if (body.verify) Object.assign(rec, await this.verifyRecord(rec));
    await this.records.put(rec);
    return rec;
  }

  /** Reads the secret, checks it, connects and checks the installation's permissions and the repository. */
  async verify(id: string): Promise<GithubIntegrationRecord> {
    const rec = this.mustGet(id);
    this.apis.delete(id);
    try {
      return await this.records.update(id, { ...(await this.verifyRecord(rec)), lastError: null });
    } catch (err) {
      await this.noteError(id, err);
      throw err;
    }
  }

  /** Integrations, oldest first (one tenant's when given). */
  list(tenantId?: string): GithubIntegrationRecord[] {
    return this.records.list((r) => tenantId === undefined || tenantOf(r) === tenantId).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  }

  get(id: string): GithubIntegrationRecord | undefined {
    return this.records.get(id);
  }

  /** The integration as `tenantId` sees it (another tenant's: undefined, like a missing one). */
  getFor(tenantId: string, id: string): GithubIntegrationRecord | undefined {
    const r = this.records.get(id);
    return r && tenantOf(r) === tenantId ? r : undefined;
  }

  async remove(id: string): Promise<boolean> {
    this.apis.delete(id);
    return this.records.delete(id);
  }

  /** The credential of an integration, checked (the WebhookSecret is what inbound deliveries verify with). */
  async credential(rec: GithubIntegrationRecord): Promise<GithubAppCredential> {
    const raw = await this.deps.secrets.get(rec.secretName);
    if (raw === null) {
      throw new IntegrationError('secret_not_found', `no credential secret ${rec.secretName} in the ${this.deps.secrets.kind} secret store; store one with PUT /api/v1/secrets/{name} (fields AppID, InstallationID, PrivateKeyPEM, WebhookSecret)`, { secret: rec.secretName });
    }
    const cred = parseGithubCredential(raw, rec.secretName);
    if (cred.installationId !== rec.installationId) {
      throw new IntegrationError('installation_mismatch', `secret ${rec.secretName} holds InstallationID ${cred.installationId} but the integration names github_installation_id ${rec.installationId}`, { secret: rec.secretName });
    }
    return cred;
  }

  // ---- SourceHostPort -------------------------------------------------------------------------

  integrationsFor(agentId: string): HostIntegration[] {
    return this.records.list((r) => r.agents.includes(agentId)).map(hostIntegration);
  }

  integration(id: string): HostIntegration | undefined {
    const r = this.records.get(id);
    return r ? hostIntegration(r) : undefined;
  }

  async defaultBranch(integrationId: string): Promise<string> {
    return (await (await this.api(integrationId)).defaultBranch()).name;
  }

  async branchHead(integrationId: string, branch: string): Promise<string | null> {
    return this.guard(integrationId, async (api) => api.branchHead(branch));
  }

  async pushBranch(integrationId: string, req: { branch: string; local: LocalCommit; message: string }): Promise<{ sha: string; base: string }> {
    return this.guard(integrationId, async (api) => {
      const workspace = req.local.source ?? this.deps.defaultWorkspace();
      if (!workspace) throw new Error('the PR\'s commit names no workspace and the server has none');
      const files = await localChanges(req.local, workspace);
      if (files.length === 0) throw new Error(`the commit ${req.local.commit.slice(0, 12)} changes no file`);
      const base = await api.defaultBranch();
      const pushed = await api.commitBranch({ branch: req.branch, baseSha: base.sha, files, message: req.message });
      return { sha: pushed.sha, base: base.name };
    });
  }

  async findPull(integrationId: string, branch: string): Promise<HostPull | null> {
    return this.guard(integrationId, async (api) => {
      const p = await api.findPull(branch);
      return p ? { number: p.number, url: p.url, htmlUrl: p.htmlUrl, headSha: p.headSha, branch: p.headRef, state: p.state, merged: p.merged } : null;
    });
  }

  async openPull(integrationId: string, req: { branch: string; base: string; title: string; body: string }): Promise<HostPull> {
    return this.guard(integrationId, async (api) => {
      const p = await api.openPull(req);
      return { number: p.number, url: p.url, htmlUrl: p.htmlUrl, headSha: p.headSha, branch: p.headRef, state: p.state, merged: p.merged };
    });
  }

  async addLabels(integrationId: string, number: number, labels: string[]): Promise<void> {
    await this.guard(integrationId, (api) => api.addLabels(number, labels));
  }

  async comment(integrationId: string, number: number, body: string): Promise<void> {
    await this.guard(integrationId, (api) => api.comment(number, body));
  }

  async pullFiles(integrationId: string, number: number) {
    return this.guard(integrationId, (api) => api.pullFiles(number));
  }

  ci(integrationId: string, headSha: string): CiSummary {
    const rec = this.ciResults.get(`${integrationId}:${headSha}`);
    return ciSummary(rec);
  }

  // ---- webhook state --------------------------------------------------------------------------

  /** True the first time a delivery id is seen (recorded durably, pending with its payload); false for a redelivery. */
  async firstDelivery(id: string, event: string, integrationId: string, payload: Record<string, unknown> = {}): Promise<boolean> {
    if (this.deliveries.get(id)) return false;
    await this.deliveries.put({ id, event, integrationId, at: this.iso(), status: 'pending', payload });
    if (this.deliveries.count() > MAX_DELIVERIES) {
      // GitHub redelivers within hours, not after thousands of deliveries: the oldest ids go.
      const old = this.deliveries.list().sort((a, b) => (a.at < b.at ? -1 : 1)).slice(0, this.deliveries.count() - MAX_DELIVERIES);
      for (const d of old) await this.deliveries.delete(d.id);
    }
    return true;
  }

  /** The delivery was processed: its payload is no longer kept. */
  async deliveryDone(id: string): Promise<void> {
    const rec = this.deliveries.get(id);
    if (!rec || rec.status === 'done') return;
    const { payload: _dropped, ...rest } = rec;
    await this.deliveries.put({ ...rest, status: 'done' });
  }

  /** Deliveries answered 200 but not processed when the server stopped, oldest first. */
  pendingDeliveries(): DeliveryRecord[] {
    return this.deliveries.list().filter((d) => d.status === 'pending').sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  async recordCi(integrationId: string, headSha: string, run: { key: string; name: string; kind: string; status: string; conclusion: string | null }): Promise<CiSummary> {
    const id = `${integrationId}:${headSha}`;
    const prev = this.ciResults.get(id);
    const runs = { ...(prev?.runs ?? {}), [run.key]: { name: run.name, kind: run.kind, status: run.status, conclusion: run.conclusion, at: this.iso() } };
    const rec: CiRecord = { id, integrationId, headSha, runs, updatedAt: this.iso() };
    await this.ciResults.put(rec);
    return ciSummary(rec);
  }

  // ---- internals ------------------------------------------------------------------------------

  private async verifyRecord(rec: GithubIntegrationRecord): Promise<Pick<GithubIntegrationRecord, 'appId' | 'permissions' | 'verifiedAt'>> {
    const cred = await this.credential(rec);
    const api = await GithubApi.connect(cred, { apiUrl: rec.apiUrl, repo: rec.repo }, { ...this.deps.api, log: this.deps.log });
    const permissions = await api.checkPermissions();
    await api.defaultBranch();
    this.apis.set(rec.id, Promise.resolve(api));
    return { appId: cred.appId, permissions, verifiedAt: this.iso() };
  }

  private api(integrationId: string): Promise<GithubApi> {
    let p = this.apis.get(integrationId);
    if (!p) {
      const rec = this.mustGet(integrationId);
      p = (async () => {
        const cred = await this.credential(rec);
        const api = await GithubApi.connect(cred, { apiUrl: rec.apiUrl, repo: rec.repo }, { ...this.deps.api, log: this.deps.log });
        // First use of an integration registered without verification: the permissions are checked now.
        if (!rec.verifiedAt) {
          const permissions = await api.checkPermissions();
          await this.records.update(rec.id, { appId: cred.appId, permissions, verifiedAt: this.iso() });
        }
        return api;
      })();
      p.catch(() => this.apis.delete(integrationId));
      this.apis.set(integrationId, p);
    }
    return p;
  }

  /** Runs `fn` with the integration's API; a failure is kept on the record (shown by GET) and rethrown. */
  private async guard<T>(integrationId: string, fn: (api: GithubApi) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.api(integrationId));
    } catch (err) {
      await this.noteError(integrationId, err);
      throw err;
    }
  }

  private async noteError(id: string, err: unknown): Promise<void> {
    if (!this.records.get(id)) return;
    const reason = isIntegrationError(err) ? err.reason : 'error';
    await this.records.update(id, { lastError: { reason, message: String((err as Error)?.message ?? err).slice(0, 1000), at: this.iso() } }).catch(() => undefined);
  }

  private mustGet(id: string): GithubIntegrationRecord {
    const r = this.records.get(id);
    if (!r) throw new IntegrationError('github_error', `no GitHub integration ${id}`);
    return r;
  }

  private iso(): string {
    return new Date((this.deps.now ?? Date.now)()).toISOString();
  }
}

function hostIntegration(r: GithubIntegrationRecord): HostIntegration {
  return { id: r.id, host: 'github', tenantId: tenantOf(r), repo: r.repo, agents: r.agents, requireReview: r.requireReview };
}

export function ciSummary(rec: CiRecord | undefined): CiSummary {
  const runs = Object.values(rec?.runs ?? {}).map((r) => ({ name: r.name, status: r.status, conclusion: r.conclusion }));
  if (runs.length === 0) return { state: 'none', runs };
  if (runs.some((r) => r.status !== 'completed')) return { state: 'pending', runs };
  const ok = new Set(['success', 'neutral', 'skipped']);
  return { state: runs.every((r) => ok.has(r.conclusion ?? '')) ? 'success' : 'failure', runs };
}
