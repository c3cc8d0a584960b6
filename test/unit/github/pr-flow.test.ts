/**
 * The ACMF-gated PR flow against the GitHub stand-in: a real engine (ACMF service, side-effect
 * ledger, audit trail), the real GitHub adapter (octokit, auth-app, Git Data API) and a real git
 * repository holding coder-ai's commit.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AcmfMode } from '../../../server/src/engine/catalog/enums';
import { DurableSideEffectLedger } from '../../../server/src/engine/executions/side-effect-ledger';
import type { SideEffectRecord } from '../../../server/src/engine/executions/records';
import { PR_COLLECTION, type PrRecord } from '../../../server/src/engine/pr-flow/ports';
import { PrFlow, prBranch, type PrCreateRequest } from '../../../server/src/engine/pr-flow/pr-flow';
import { diffFiles } from '../../../server/src/engine/pr-flow/triggers';
import { GithubIntegrations } from '../../../server/src/integrations/github/github-integrations';
import { isIntegrationError } from '../../../server/src/integrations/github/errors';
import { LocalSecretStore } from '../../../server/src/secrets/local-secret-store';
import { createHarness, MemoryStore, type Harness } from '../../support/engine-harness';
import { GithubStandin, rsaKeyPair } from './github-standin';

const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const tmp = (p: string) => realpathSync(mkdtempSync(path.join(tmpdir(), p)));
const WEBHOOK = 'b'.repeat(64);
const APP = 4242;
const INST = 99;

/** A repository with a base commit and coder-ai's commit on its own branch (the files given). */
function coderCommit(files: Record<string, string>): { repo: string; base: string; commit: string } {
  const repo = tmp('cadre-pr-repo-');
  sh(repo, 'init', '-q', '-b', 'main');
  sh(repo, 'config', 'user.name', 'Test');
  sh(repo, 'config', 'user.email', 't@example.com');
  mkdirSync(path.join(repo, 'src'));
  writeFileSync(path.join(repo, 'src/index.ts'), 'export const ok = true;\n');
  sh(repo, 'add', '.');
  sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'base');
  const base = sh(repo, 'rev-parse', 'HEAD');
  sh(repo, 'checkout', '-q', '-b', 'cadre/act1-s0-refactor');
  for (const [f, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
    writeFileSync(path.join(repo, f), c);
  }
  sh(repo, 'add', '.');
  sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'coder-ai');
  const commit = sh(repo, 'rev-parse', 'HEAD');
  sh(repo, 'checkout', '-q', 'main');
  return { repo, base, commit };
}

interface World {
  h: Harness;
  gh: GithubStandin;
  integrations: GithubIntegrations;
  store: MemoryStore;
  flow: PrFlow;
  integrationId: string;
  logs: string[];
  newFlow(): PrFlow;
  close(): Promise<void>;
}

async function world(opts: { mode?: AcmfMode; standin?: Partial<ConstructorParameters<typeof GithubStandin>[0]> } = {}): Promise<World> {
  const keys = rsaKeyPair();
  const gh = await new GithubStandin({ appId: APP, installationId: INST, publicKey: keys.publicKey, ...opts.standin }).start();
  const h = await createHarness();
  const store = new MemoryStore();
  const secrets = new LocalSecretStore({ dataDir: tmp('cadre-pr-data-'), keyFile: path.join(tmp('cadre-pr-key-'), 'k') });
  await secrets.put('cadre/integrations/local/github', JSON.stringify({ AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK }));
  const logs: string[] = [];
  const integrations = new GithubIntegrations({ store, secrets, namespace: 'cadre', customerId: 'local', defaultWorkspace: () => undefined, log: (l) => logs.push(l), api: { writeSpacing: false, retries: 0 } });
  const rec = await integrations.register({ integration_name: 'svc', github_repo: gh.full, github_installation_id: INST, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true }, verify: true }, 'key:test');
  if (opts.mode) await h.engine.acmf.setMode('coder-ai', opts.mode, 'user:test', 'test');
  const ledgerRepo = store.collection<SideEffectRecord>('sideEffects');
  const newFlow = () => {
    // A fresh ledger and flow over the same records: what a restarted process has.
    const ledger = new DurableSideEffectLedger({ repo: ledgerRepo, clock: h.engine.clock, newId: (p) => `${p}_${Math.random().toString(16).slice(2)}`, log: (l) => logs.push(l) });
    const flow = new PrFlow({
      bus: h.engine.bus, acmf: h.engine.acmf, audit: h.engine.audit, host: integrations, records: store.collection<PrRecord>(PR_COLLECTION),
      once: (...a) => ledger.once(...a), riskContext: () => ({ protectedPaths: ['.github/workflows/**', 'package-lock.json'], approvalRequiredFor: [] }),
      clock: h.engine.clock, log: (l) => logs.push(l),
    });
    flow.start();
    return flow;
  };
  const flow = newFlow();
  return { h, gh, integrations, store, flow, integrationId: rec.id, logs, newFlow, close: async () => { flow.stop(); await gh.close(); await h.close(); } };
}

function request(c: { repo: string; base: string; commit: string }, over: Partial<PrCreateRequest> = {}): PrCreateRequest {
  const diff = sh(c.repo, 'diff', c.base, c.commit);
  return {
    executionId: 'act_0123456789abcdef01234567', agentId: 'coder-ai', step: 0,
    local: { source: c.repo, branch: 'cadre/act1-s0-refactor', commit: c.commit, base: c.base },
    files: diffFiles(diff),
    evidence: { confidence: 0.82, summary: 'moved a hard-coded key into an environment read', findingsFixed: ['aws-access-key in src/config.ts'], coverage: 91,
      gates: [{ number: 1, gate: 'no-secrets', status: 'pass', value: 0, threshold: 0 }, { number: 20, gate: 'coverage', status: 'pass', value: 91, threshold: 80 }] },
    ...over,
  };
}

describe('github: the ACMF-gated PR flow', function () {
  this.timeout(60_000);
  let w: World | undefined;
  afterEach(async () => { await w?.close(); w = undefined; });

  it('OBSERVE logs the proposed change in the audit trail and creates nothing on GitHub', async () => {
    w = await world({ mode: 'OBSERVE' });
    const c = coderCommit({ 'src/config.ts': 'export const key = process.env.KEY;\n' });
    const [rec] = await w.flow.request(request(c));
    await w.flow.settled();
    assert.equal(rec!.status, 'observed');
    assert.deepEqual(w.gh.branches(), []);
    assert.equal(w.gh.pulls.length, 0);
    const audited = await w.h.audit.query({ kind: 'pr.requested' });
    assert.equal(audited.length, 1);
    assert.deepEqual((audited[0]!.data['files'] as Array<{ path: string }>).map((f) => f.path), ['src/config.ts']);
  });

  it('LEARNING files an approval before anything exists; approved, it opens one PR on cadre/<agent>/<execution> with the evidence and the ACMF level', async () => {
    w = await world({ mode: 'LEARNING' });
    const c = coderCommit({ 'src/config.ts': 'export const key = process.env.KEY;\n' });
    const [rec] = await w.flow.request(request(c));
    assert.equal(rec!.status, 'awaiting_approval');
    const pending = w.h.engine.acmf.pendingApprovals({ executionId: rec!.executionId });
    assert.equal(pending.length, 1);
    assert.equal(pending[0]!.action.kind, 'open_pr');
    assert.deepEqual(w.gh.branches(), [], 'nothing created before the approval');
    await w.h.engine.acmf.decideApproval(pending[0]!.id, { approved: true, by: 'user:alice' });
    await w.flow.settled();
    const done = w.flow.get(rec!.id)!;
    assert.equal(done.status, 'open', JSON.stringify(done.error));
    assert.deepEqual(w.gh.branches(), [prBranch('coder-ai', 'act_0123456789abcdef01234567')]);
    assert.equal(w.gh.fileAt(done.branch, 'src/config.ts'), 'export const key = process.env.KEY;\n');
    assert.equal(w.gh.fileAt('main', 'src/config.ts'), undefined, 'the default branch is untouched');
    const pr = w.gh.pulls[0]!;
    assert.equal(w.gh.pulls.length, 1);
    assert.equal(pr.base, 'main');
    assert.match(pr.body, /\*\*ACMF level:\*\* `LEARNING`/);
    assert.match(pr.body, /\| 20 \| coverage \| pass \| 91 \| 80 \|/);
    assert.match(pr.body, /aws-access-key in src\/config.ts/);
    assert.match(pr.body, /Confidence:\*\* 82%/);
    assert.deepEqual(pr.labels, ['cadre', 'cadre:acmf-learning']);
  });

  it('LEARNING denied: no branch, no PR', async () => {
    w = await world({ mode: 'LEARNING' });
    const [rec] = await w.flow.request(request(coderCommit({ 'src/a.ts': 'export const a = 1;\n' })));
    await w.h.engine.acmf.decideApproval(rec!.approvalId!, { approved: false, by: 'user:alice' });
    await w.flow.settled();
    assert.equal(w.flow.get(rec!.id)!.status, 'denied');
    assert.deepEqual(w.gh.branches(), []);
  });

  it('ASSISTED creates a small change at once, and asks approval first for a significant one (a CI workflow or a lockfile)', async () => {
    w = await world({ mode: 'ASSISTED' });
    const small = await w.flow.request(request(coderCommit({ 'src/a.ts': 'export const a = 1;\n' })));
    await w.flow.settled();
    assert.equal(w.flow.get(small[0]!.id)!.status, 'open');
    const big = await w.flow.request(request(coderCommit({ '.github/workflows/ci.yml': 'on: push\n' }), { executionId: 'act_ffffffffffffffffffffffff' }));
    assert.equal(big[0]!.status, 'awaiting_approval');
    assert.equal(big[0]!.significant.significant, true);
    assert.match(big[0]!.significant.reasons.join(' '), /workflows/);
    assert.equal(w.gh.pulls.length, 1);
  });

  it('AUTONOMOUS creates; asking again (a retry) answers the same record and opens nothing more', async () => {
    w = await world({ mode: 'AUTONOMOUS' });
    const req = request(coderCommit({ 'src/a.ts': 'export const a = 1;\n' }));
    await w.flow.request(req);
    await w.flow.settled();
    await w.flow.request(req);
    await w.flow.settled();
    assert.equal(w.gh.pulls.length, 1);
    assert.equal(w.gh.branches().length, 1);
    assert.deepEqual(w.gh.pulls[0]!.labels, ['cadre', 'cadre:acmf-autonomous']);
  });

  it('an incident PR is LEARNING even for an AUTONOMOUS agent, high risk, and lists human approval, CI and 90% coverage before merge', async () => {
    w = await world({ mode: 'AUTONOMOUS' });
    const [rec] = await w.flow.request(request(coderCommit({ 'src/a.ts': 'export const a = 1;\n' }), { incident: 'INC-7' }));
    assert.equal(rec!.mode, 'LEARNING');
    const approval = w.h.engine.acmf.getApproval(rec!.approvalId!);
    assert.equal(approval.risk, 'high');
    await w.h.engine.acmf.decideApproval(approval.id, { approved: true, by: 'user:alice' });
    await w.flow.settled();
    const pr = w.gh.pulls[0]!;
    assert.deepEqual(pr.labels, ['cadre', 'cadre:acmf-learning', 'cadre:incident-fix']);
    assert.match(pr.body, /coverage is at least 90%/);
    const readiness = w.flow.mergeReadiness(w.flow.get(rec!.id)!);
    assert.equal(readiness.ready, false);
    assert.ok(readiness.missing.includes('no approving review by a person'));
  });

  it('a branch-protection rule (422) fails the request with reason branch_protection and names the branch; no PR', async () => {
    w = await world({ mode: 'AUTONOMOUS', standin: { protect: /^heads\/cadre\// } });
    const [rec] = await w.flow.request(request(coderCommit({ 'src/a.ts': 'export const a = 1;\n' })));
    await w.flow.settled();
    const failed = w.flow.get(rec!.id)!;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error!.reason, 'branch_protection');
    assert.match(failed.error!.message, /branch protection of octo-org\/service refused pushing branch cadre\/coder-ai\/act_0123456789abcdef01234567.*creations being restricted/);
    assert.equal(w.integrations.get(w.integrationId)!.lastError!.reason, 'branch_protection');
    assert.equal(w.gh.pulls.length, 0);
  });

  it('a process that died between "branch created" and "PR opened" resumes into exactly one PR (ledger + find by head branch)', async () => {
    w = await world({ mode: 'AUTONOMOUS', standin: { hangAfterPullCreate: true } });
    const [rec] = await w.flow.request(request(coderCommit({ 'src/a.ts': 'export const a = 1;\n' })));
    await w.gh.pullCreateArrived;
    // The first process "dies" here: its flow is dropped with the PR create unanswered.
    w.flow.stop();
    assert.equal(w.flow.get(rec!.id)!.status, 'opening');
    w.gh.opts.hangAfterPullCreate = false;
    const restarted = w.newFlow();
    assert.equal(restarted.resume(), 1);
    await restarted.settled();
    assert.equal(restarted.get(rec!.id)!.status, 'open');
    assert.equal(w.gh.pulls.length, 1, 'one PR');
    assert.equal(w.gh.branches().length, 1, 'one branch');
    assert.equal(w.gh.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/git/refs')).length, 1, 'the branch was created once');
    restarted.stop();
  });
});

describe('github: the App client against the stand-in', function () {
  this.timeout(60_000);

  it('a missing permission is refused at registration naming the permission; a wrong AppID fails authentication', async () => {
    const keys = rsaKeyPair();
    const gh = await new GithubStandin({ appId: APP, installationId: INST, publicKey: keys.publicKey, permissions: { contents: 'read', metadata: 'read' } }).start();
    try {
      const store = new MemoryStore();
      const secrets = new LocalSecretStore({ dataDir: tmp('cadre-pr-data-'), keyFile: path.join(tmp('cadre-pr-key-'), 'k') });
      await secrets.put('s/ok', JSON.stringify({ AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK }));
      await secrets.put('s/other-app', JSON.stringify({ AppID: APP + 1, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK }));
      const integrations = new GithubIntegrations({ store, secrets, namespace: 'cadre', customerId: 'local', defaultWorkspace: () => undefined, log: () => {}, api: { writeSpacing: false, retries: 0 } });
      const body = { integration_name: 'svc', github_repo: gh.full, github_installation_id: INST, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true }, verify: true };
      const err = await integrations.register({ ...body, secrets_manager_arn: 's/ok' }, 'k').catch((e: unknown) => e);
      assert.ok(isIntegrationError(err), String(err));
      assert.equal(err.reason, 'missing_permissions');
      assert.match(err.message, /lacks the repository permissions Contents \(read and write; has read\), Pull requests \(read and write; has none\)/);
      const auth = await integrations.register({ ...body, integration_name: 'svc2', secrets_manager_arn: 's/other-app' }, 'k').catch((e: unknown) => e);
      assert.ok(isIntegrationError(auth));
      assert.equal(auth.reason, 'auth_failed');
      assert.equal(integrations.list().length, 0, 'nothing stored');
    } finally {
      await gh.close();
    }
  });

  it('installation tokens are cached until expiry, and a rate-limited answer (X-RateLimit-Remaining: 0) is waited out and retried', async () => {
    const keys = rsaKeyPair();
    const gh = await new GithubStandin({ appId: APP, installationId: INST, publicKey: keys.publicKey, rateLimitFirst: 1 }).start();
    try {
      const store = new MemoryStore();
      const secrets = new LocalSecretStore({ dataDir: tmp('cadre-pr-data-'), keyFile: path.join(tmp('cadre-pr-key-'), 'k') });
      await secrets.put('cadre/integrations/local/github', JSON.stringify({ AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK }));
      const logs: string[] = [];
      const integrations = new GithubIntegrations({ store, secrets, namespace: 'cadre', customerId: 'local', defaultWorkspace: () => undefined, log: (l) => logs.push(l), api: { writeSpacing: false, retries: 0 } });
      const rec = await integrations.register({ integration_name: 'svc', github_repo: gh.full, github_installation_id: INST, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true }, verify: true }, 'k');
      for (let i = 0; i < 3; i++) assert.equal(await integrations.branchHead(rec.id, 'nope'), null);
      assert.equal(gh.tokensIssued, 1, 'one installation token for every call');
      assert.ok(logs.some((l) => /rate limit reached/.test(l)), logs.join('\n'));
      assert.equal(gh.requests.filter((r) => r.status === 403).length, 1);
    } finally {
      await gh.close();
    }
  });
});
