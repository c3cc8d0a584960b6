/**
 * Approvals reach the editor without polling (issue 15): the language server sends
 * `cadre/approvalChanged` for every approval filed, decided, expired or closed, also for the one the
 * GitHub PR flow files AFTER coder-ai's execution ended (no execution event tells the editor then).
 * Over the built server (dist/server.js --stdio) and the loopback GitHub stand-in, coder-ai in LEARNING.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ClientRequests } from '../../../protocol/lsp-messages';
import { KEY } from '../../support/fleet-server';
import { ensureBuilt, tempDir } from '../../support/server-process';
import { GithubStandin, rsaKeyPair } from '../../unit/github/github-standin';
import { startLsp, until, type Json, type LspSession } from './lsp-session';

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV }).trim();

/** A repository with a planted key (built at run time) that coder-ai's refactor moves to the environment. */
function repoWithSecret(): string {
  const repo = realpathSync(tempDir('cadre-lsp-pr-'));
  mkdirSync(path.join(repo, 'src'));
  writeFileSync(path.join(repo, 'src/config.ts'), `export const awsKey = "${'AKIA' + 'Z7QRSTUVWXY2345A'}";\n`);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  return repo;
}

describe('language server: approvals reach the editor as cadre/approvalChanged', function () {
  this.timeout(180_000);
  const keys = rsaKeyPair();
  const gh = new GithubStandin({ appId: 31337, installationId: 4711, publicKey: keys.publicKey });
  let lsp: LspSession | undefined;

  before(async () => {
    ensureBuilt();
    await gh.start();
    const ws = realpathSync(tempDir('cadre-lsp-ws-'));
    lsp = await startLsp({
      folders: [ws], key: KEY,
      env: { CADRE_SECRET_KEY_FILE: path.join(tempDir('cadre-lsp-key-'), 'secret.key'), CADRE_GITHUB_WRITE_SPACING: 'off' },
    });
  });
  after(async () => {
    await lsp?.stop();
    await gh.close().catch(() => {});
  });

  it("the PR flow's approval, filed after coder-ai's execution ended, is pushed to the editor; deciding it pushes the decision", async () => {
    const l = lsp!;
    const stored = await l.rest('PUT', `/api/v1/secrets/${encodeURIComponent('cadre/integrations/local/github')}`, { AppID: 31337, InstallationID: 4711, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: 'e'.repeat(64) });
    assert.equal(stored.status, 200, stored.text);
    const reg = await l.rest('POST', '/api/v1/integrations/github', { integration_name: 'service', github_repo: gh.full, github_installation_id: 4711, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true } });
    assert.equal(reg.status, 201, reg.text);
    const run = await l.rest('POST', '/api/agents/coder-ai/refactor', { prompt: 'read secrets from the environment', source: repoWithSecret() });
    assert.equal(run.status, 202, run.text);
    const executionId = String(run.json['executionId']);

    // coder-ai's own writes (LEARNING) are approved as their notifications arrive, until the PR request comes.
    const approved = new Set<string>();
    const pr = await until('the pull-request approval as cadre/approvalChanged', async () => {
      for (const c of l.approvalChanges()) {
        if (c.change !== 'requested') continue;
        if (/open a pull request/.test(c.approval.action)) return c;
        if (!approved.has(c.approval.id)) {
          approved.add(c.approval.id);
          await l.conn.sendRequest(ClientRequests.decideApproval, { id: c.approval.id, approved: true, by: 'it' });
        }
      }
      return null;
    }, 120_000).catch((err: Error) => {
      throw new Error(`${err.message}; changes: ${JSON.stringify(l.approvalChanges())}`);
    });
    assert.ok(approved.size >= 1, "coder-ai's writes asked first");
    assert.equal(pr.approval.agentId, 'coder-ai');
    assert.equal(pr.status, 'pending');
    assert.equal(pr.decidedBy, null);
    assert.match(pr.approval.action, new RegExp(`open a pull request on ${gh.full}`));

    // It came after the execution's last event, and no execution event names it: only this notification tells the editor.
    const order = l.received.map((x) => (x.kind === 'event' ? `${x.event.type}:${x.event.execution_id}` : `approval:${x.change.change}:${x.change.approval.id}`));
    const ended = order.findIndex((x) => x === `execution_completed:${executionId}` || x === `execution_failed:${executionId}`);
    assert.ok(ended >= 0, `the refactor ended: ${order.join(' ')}`);
    assert.ok(order.indexOf(`approval:requested:${pr.approval.id}`) > ended, `requested after the execution ended: ${order.join(' ')}`);
    assert.ok(!l.events().some((e) => (e.type === 'approval_requested' || e.type === 'approval_decided') && e.approval_id === pr.approval.id), 'no execution event carries the PR approval');
    // The notification's row is the row the Approvals view lists.
    const pending = await l.conn.sendRequest(ClientRequests.approvals, {});
    assert.deepEqual(pending.find((a) => a.id === pr.approval.id), pr.approval);
    // In-run approvals are pushed too, each request then its decision.
    for (const id of approved) {
      assert.deepEqual(l.approvalChanges().filter((c) => c.approval.id === id).map((c) => `${c.change}:${c.status}`), ['requested:pending', 'decided:approved']);
    }

    assert.equal(gh.pulls.length, 0, 'nothing is opened before a person approves');
    await l.conn.sendRequest(ClientRequests.decideApproval, { id: pr.approval.id, approved: true, by: 'it' });
    const decided = await until('the decision pushed', () => l.approvalChanges().find((c) => c.approval.id === pr.approval.id && c.change === 'decided'));
    assert.equal(decided.status, 'approved');
    assert.match(String(decided.decidedBy), /^editor:/);
    await until('the PR on the GitHub stand-in', () => gh.pulls[0], 60_000);
    const after = (await l.rest('GET', '/v1/approvals?status=all')).json['approvals'] as Json[];
    assert.equal(after.find((a) => a['id'] === pr.approval.id)?.['status'], 'approved');
  });
});
