/**
 * The incident chain on the bus, in order and once per incident: incident.resolution.completed →
 * pipeline.fix.request → pipeline.fix.completed → agent.github.pr.create → pipeline.review.request →
 * pipeline.review.passed → pipeline.deploy.staging, with a person's approval of the incident PR in
 * between (incident PRs are LEARNING), against the GitHub stand-in; each step in the audit trail.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineEvent } from '../../../protocol/events';
import type { ExecutionRecord } from '../../../server/src/engine/executions/records';
import { DurableSideEffectLedger } from '../../../server/src/engine/executions/side-effect-ledger';
import type { SideEffectRecord } from '../../../server/src/engine/executions/records';
import { PR_COLLECTION, type PrRecord } from '../../../server/src/engine/pr-flow/ports';
import { PrFlow } from '../../../server/src/engine/pr-flow/pr-flow';
import { INCIDENT_CHAIN_COLLECTION, PrTriggers, type IncidentChainRecord } from '../../../server/src/engine/pr-flow/triggers';
import { GithubIntegrations } from '../../../server/src/integrations/github/github-integrations';
import { LocalSecretStore } from '../../../server/src/secrets/local-secret-store';
import { createHarness, MemoryStore } from '../../support/engine-harness';
import { GithubStandin, rsaKeyPair } from './github-standin';

const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const tmp = (p: string) => realpathSync(mkdtempSync(path.join(tmpdir(), p)));

const CHAIN = ['incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.github.pr.create', 'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging'] as const;

describe('github: the incident chain on the bus', function () {
  this.timeout(60_000);

  it('runs each topic once per incident, in order, with the approval of the LEARNING incident PR in between; a second resolution of the same incident publishes nothing', async () => {
    const keys = rsaKeyPair();
    const gh = await new GithubStandin({ appId: 7, installationId: 8, publicKey: keys.publicKey }).start();
    const h = await createHarness();
    try {
      // coder-ai's fix: a commit on its branch in a real repository.
      const repo = tmp('cadre-chain-repo-');
      sh(repo, 'init', '-q', '-b', 'main');
      sh(repo, 'config', 'user.name', 'T');
      sh(repo, 'config', 'user.email', 't@example.com');
      mkdirSync(path.join(repo, 'src'));
      writeFileSync(path.join(repo, 'src/pool.ts'), 'export const size = 1;\n');
      sh(repo, 'add', '.');
      sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'base');
      const base = sh(repo, 'rev-parse', 'HEAD');
      writeFileSync(path.join(repo, 'src/pool.ts'), 'export const size = 16;\n');
      sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-am', 'fix');
      const commit = sh(repo, 'rev-parse', 'HEAD');
      const diff = sh(repo, 'diff', base, commit);

      const store = new MemoryStore();
      const secrets = new LocalSecretStore({ dataDir: tmp('cadre-chain-data-'), keyFile: path.join(tmp('cadre-chain-key-'), 'k') });
      await secrets.put('cadre/integrations/local/github', JSON.stringify({ AppID: 7, InstallationID: 8, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: 'c'.repeat(64) }));
      const integrations = new GithubIntegrations({ store, secrets, namespace: 'cadre', customerId: 'local', defaultWorkspace: () => repo, log: () => {}, api: { writeSpacing: false, retries: 0 } });
      await integrations.register({ integration_name: 'svc', github_repo: gh.full, github_installation_id: 8, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true }, verify: true }, 'k');

      const seen: string[] = [];
      for (const t of CHAIN) h.engine.bus.subscribe(t as 'pipeline.fix.request', (m) => void (m['incidentId'] === 'INC-42' ? seen.push(t) : undefined));
      const fixes: string[] = [];
      const executions = new Map<string, ExecutionRecord>();
      const ledger = new DurableSideEffectLedger({ repo: store.collection<SideEffectRecord>('sideEffects'), clock: h.engine.clock, newId: (p) => `${p}_1`, log: () => {} });
      const deployed: string[] = [];
      let releaseDeploy!: () => void;
      const deployHeld = new Promise<void>((r) => (releaseDeploy = r));
      const flow = new PrFlow({
        bus: h.engine.bus, acmf: h.engine.acmf, audit: h.engine.audit, host: integrations, records: store.collection<PrRecord>(PR_COLLECTION),
        once: (...a) => ledger.once(...a), riskContext: () => ({ protectedPaths: [], approvalRequiredFor: [] }),
        reviewer: { review: async () => ({ passed: true, summary: 'no findings on the diff', executionId: 'act_review', findings: 0 }) },
        deployer: { deploy: async ({ pull }) => { deployed.push(pull.branch); await deployHeld; return { executionId: 'act_deploy', status: 'completed' }; } },
        clock: h.engine.clock, log: () => {},
      });
      const triggers = new PrTriggers({
        bus: h.engine.bus, audit: h.engine.audit, host: 'github', executions: { find: (id) => executions.get(id) },
        chains: store.collection<IncidentChainRecord>(INCIDENT_CHAIN_COLLECTION), clock: h.engine.clock, log: () => {},
        fixer: { fix: async ({ incidentId }) => { fixes.push(incidentId); return { executionId: 'act_fix42' }; } },
      });
      flow.start();
      triggers.start();
      await h.engine.acmf.setMode('coder-ai', 'AUTONOMOUS', 'user:test', 'test');

      h.engine.bus.publish('incident.resolution.completed', { executionId: 'inc_exec', incidentId: 'INC-42', summary: 'connection pool exhausted', source: repo });
      await waitFor(() => fixes.length === 1);
      // coder-ai's fix execution completes with its branch.
      executions.set('act_fix42', {
        id: 'act_fix42', status: 'completed', request: { source: repo }, steps: [{
          step: 0, agentId: 'coder-ai', action: 'invoke', status: 'completed', passed: true, confidence: 0.9, summary: 'pool size raised', outcome: 'completed',
          output: { mode: 'branch', branch: 'cadre/actfix42-s0-invoke', commit, base, diff },
        }],
      } as unknown as ExecutionRecord);
      h.engine.bus.publish('engine.event', { type: 'execution_completed', execution_id: 'act_fix42', status: 'completed', seq: 1, ts: '' } as unknown as EngineEvent);
      await waitFor(() => flow.list().length === 1 && flow.list()[0]!.approvalId !== undefined);
      const rec = flow.list()[0]!;
      assert.equal(rec.mode, 'LEARNING', 'incident PRs are LEARNING');
      assert.deepEqual(seen, CHAIN.slice(0, 4), 'the chain waits for a person before the PR exists');
      await h.engine.acmf.decideApproval(rec.approvalId!, { approved: true, by: 'user:oncall' });
      await waitFor(() => deployed.length === 1);
      // A person merges the PR while staging still runs: the merge is what the record keeps.
      await flow.onPullEvent({ integrationId: rec.integrationId, branch: rec.branch, action: 'closed', merged: true });
      releaseDeploy();
      await waitFor(() => flow.list()[0]!.deploy !== undefined);
      assert.equal(flow.list()[0]!.status, 'merged', 'the staging deploy ending after the merge does not overwrite it');
      assert.deepEqual(seen, [...CHAIN]);
      assert.equal(gh.pulls.length, 1);

      // The same incident resolved again (a redelivered event): nothing runs or publishes twice.
      h.engine.bus.publish('incident.resolution.completed', { executionId: 'inc_exec', incidentId: 'INC-42' });
      h.engine.bus.publish('engine.event', { type: 'execution_completed', execution_id: 'act_fix42', status: 'completed', seq: 2, ts: '' } as unknown as EngineEvent);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(seen, [...CHAIN, 'incident.resolution.completed'], 'only the redelivered trigger itself');
      assert.equal(fixes.length, 1);
      assert.equal(gh.pulls.length, 1);
      const audited = (await h.audit.query({ kind: 'incident.chain' })).map((r) => r.data['topic']);
      assert.deepEqual(audited, ['pipeline.fix.request', 'pipeline.fix.completed', 'agent.github.pr.create', 'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging']);
      flow.stop();
      triggers.stop();
    } finally {
      await gh.close();
      await h.close();
    }
  });
});

async function waitFor(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
