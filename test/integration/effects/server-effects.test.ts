/**
 * The issue's two deterministic reproductions against the bundled server (dist/server.js, skills in
 * worker threads, the real key store): a callback receiver that answers 200 and then SIGKILLs the
 * server, and a SIGKILL as soon as coder-ai's `cadre/*` branch appears. After a restart on the same
 * data directory the effects are counted in the world.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
const cadreBranches = (repo: string) => sh(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/cadre/').split('\n').filter(Boolean);
const worktrees = (repo: string) => sh(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '));

function dataDir(): { data: string; ws: string } {
  const data = tempDir('cadre-fx-srv-');
  // Agents act without asking (coder-ai commits), at every tier; the callback receiver is on loopback (a development setting of the SSRF guard).
  writeFileSync(path.join(data, 'config.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\nwebhooks:\n  allow_loopback: true\n  allow_http: true\n');
  return { data, ws: tempDir('cadre-fx-ws-') };
}

async function keyOf(p: ServerProcess): Promise<string> {
  return (await p.line(/^New API key \(shown once; only its hash is stored\): (\S+)$/))[1]!;
}

async function api(url: string, key: string, method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url + route, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, json: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

describe('side effects of the bundled server across SIGKILL', function () {
  // Two cores shared with other work: a step can take a while; every wait below has its own bound.
  this.timeout(300_000);
  const running: ServerProcess[] = [];
  before(() => ensureBuilt());
  afterEach(async () => { for (const p of running.splice(0)) await stop(p); });

  it('a receiver that answers 200 and then SIGKILLs the server gets at most one copy, with the same delivery id and a signature of the owner key', async () => {
    const { data, ws } = dataDir();
    const p1 = await startStandalone(data, {}, ['--workspace', ws]);
    running.push(p1);
    const key = await keyOf(p1);
    const deliveries: Array<{ id: string; key: string; signature: string; body: string }> = [];
    const rx = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
        deliveries.push({ id: String(req.headers['x-cadre-delivery']), key: String(req.headers['idempotency-key']), signature: String(req.headers['x-cadre-signature']), body });
        res.writeHead(200).end('ok', () => { if (deliveries.length === 1) p1.child.kill('SIGKILL'); });
      });
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;
      const accepted = await api(p1.url, key, 'POST', '/v1/agents/tasks', { task: 'check the secrets', capabilities: ['SECURE'], source: ws, callbackUrl: url });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
      const guard = setTimeout(() => p1.child.kill('SIGKILL'), 120_000);
      assert.equal((await p1.exited).signal, 'SIGKILL');
      clearTimeout(guard);
      assert.equal(deliveries.length, 1, `no callback within the bound; server log: ${p1.stderr.slice(-10).join(' | ')}`);

      const p2 = await startStandalone(data, { CADRE_API_KEY: '' }, ['--workspace', ws]);
      running.push(p2);
      // The copy (if the kill came before the outcome record) goes out at start-up.
      for (let i = 0; i < 100 && deliveries.length < 2; i++) await new Promise((r) => setTimeout(r, 30));
      assert.ok(deliveries.length <= 2, `deliveries: ${deliveries.length}`);
      assert.equal(new Set(deliveries.map((d) => d.id)).size, 1, 'one delivery id');
      const hash = createHash('sha256').update(key).digest('hex');
      for (const d of deliveries) {
        assert.match(d.id, /^eff_[0-9a-f]{24}$/);
        assert.equal(d.key, d.id);
        assert.equal(d.signature, `sha256=${createHmac('sha256', hash).update(d.body).digest('hex')}`, 'signed with the key hash, also after the restart');
      }
    } finally {
      rx.close();
    }
  });

  it('SIGKILL as soon as coder-ai\'s cadre/* branch appears: after the restart one branch, no -2, no worktree left', async () => {
    const { data, ws } = dataDir();
    const repo = realpathSync(tempDir('cadre-fx-repo-'));
    sh(repo, 'init', '-q', '-b', 'main');
    sh(repo, 'config', 'user.name', 'Test');
    sh(repo, 'config', 'user.email', 'test@example.com');
    mkdirSync(path.join(repo, 'src'));
    writeFileSync(path.join(repo, 'src/config.ts'), `export const awsKey = "${'AKIA' + 'Z7QRSTUVWXY2345A'}";\n`);
    sh(repo, 'add', '.');
    sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init');

    const p1 = await startStandalone(data, {}, ['--workspace', ws]);
    running.push(p1);
    const key = await keyOf(p1);
    const accepted = await api(p1.url, key, 'POST', '/api/agents/coder-ai/refactor', { prompt: 'read secrets from the environment', source: repo });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
    const id = String(accepted.json['executionId'] ?? accepted.json['execution_id'] ?? accepted.json['id']);
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && cadreBranches(repo).length === 0 && p1.child.exitCode === null) await new Promise((r) => setTimeout(r, 2));
    p1.child.kill('SIGKILL');
    await p1.exited;
    assert.equal(cadreBranches(repo).length, 1, `the branch appeared before the kill; server log: ${p1.stderr.slice(-10).join(' | ')}`);

    const p2 = await startStandalone(data, { CADRE_API_KEY: '' }, ['--workspace', ws]);
    running.push(p2);
    let status = '';
    for (const end = Date.now() + 120_000; Date.now() < end && !['completed', 'failed', 'cancelled'].includes(status);) {
      const r = await api(p2.url, key, 'GET', `/api/v1/rigor/status/${id}`);
      status = String(r.json['status'] ?? '');
      if (!['completed', 'failed', 'cancelled'].includes(status)) await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(status, 'completed');
    assert.deepEqual(cadreBranches(repo).length, 1, cadreBranches(repo).join(', '));
    assert.match(sh(repo, 'log', '-1', '--format=%B', cadreBranches(repo)[0]!), new RegExp(`^Cadre-Execution: ${id}:0$`, 'm'));
    assert.deepEqual(worktrees(repo), [`worktree ${repo}`]);
  });
});
