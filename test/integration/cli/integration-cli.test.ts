import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { KEY } from '../../support/fleet-server';
import { ensureBuilt, ROOT, startStandalone, stop, type ServerProcess } from '../../support/server-process';

const CLI = path.join(ROOT, 'dist/cli.js');
const tmp = (p: string) => mkdtempSync(path.join(tmpdir(), p));

/**
 * `cadre integration` (issue 15 item 1: registration from the CLI) as a child process against a real
 * server: the credential file goes to the server's secret store once and never comes back, an
 * integration is added (without verifying against GitHub), listed, shown and removed; a snake_case
 * credential and an agent that cannot open PRs are one-line errors with the documented exit codes.
 */
describe('cadre integration (the GitHub App registration from the CLI)', function () {
  this.timeout(120_000);
  let server: ServerProcess & { url: string };
  let data = '';
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--url', server.url], { env: { ...process.env, CADRE_API_KEY: KEY, NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 });

  before(async () => {
    ensureBuilt();
    data = tmp('cadre-int-cli-data-');
    server = await startStandalone(data, { CADRE_API_KEY: KEY, CADRE_SECRET_KEY_FILE: path.join(tmp('cadre-int-cli-key-'), 'secret.key') }, ['--workspace', tmp('cadre-int-cli-ws-')]);
  });
  after(async () => stop(server));

  it('stores the credential, adds, lists, shows and removes an integration; the PEM never comes back', async () => {
    const file = path.join(tmp('cadre-int-cli-cred-'), 'app.json');
    writeFileSync(file, JSON.stringify({ AppID: 12345, InstallationID: 4242, PrivateKeyPEM: pem, WebhookSecret: 'ab'.repeat(32) }));
    const stored = run('integration', 'secret', file);
    assert.equal(stored.status, 0, stored.stderr);
    assert.match(stored.stdout, /^secret cadre\/integrations\/local\/github stored \(local\)/);

    const add = run('integration', 'add', 'octo-org/service', '--installation', '4242', '--agent', 'coder-ai', '--agent', 'maintain-ai', '--no-verify', '--json');
    assert.equal(add.status, 0, add.stderr);
    const rec = JSON.parse(add.stdout) as { integration_id: string; github_repo: string; config: { agents: string[]; require_review: boolean } };
    assert.match(rec.integration_id, /^int_[0-9a-f]{24}$/);
    assert.deepEqual([rec.github_repo, rec.config.agents, rec.config.require_review], ['octo-org/service', ['coder-ai', 'maintain-ai'], true]);

    const list = run('integration', 'list');
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${rec.integration_id}\\s+octo-org/service\\s+coder-ai,maintain-ai\\s+no`));
    const show = run('integration', 'show', rec.integration_id);
    assert.match(show.stdout, /octo-org\/service \(octo-org\/service\) agents: coder-ai, maintain-ai; review: required; not verified/);

    const removed = run('integration', 'remove', rec.integration_id);
    assert.equal(removed.status, 0, removed.stderr);
    assert.match(run('integration', 'list').stdout, /^no integrations/);

    const pemBody = pem.split('\n')[1]!;
    for (const out of [stored, add, list, show, removed]) assert.ok(!out.stdout.includes(pemBody) && !out.stderr.includes(pemBody), 'the PEM is never printed');
    const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(path.join(d, n)).isDirectory() ? walk(path.join(d, n)) : [path.join(d, n)]));
    for (const f of walk(data)) assert.ok(!readFileSync(f, 'latin1').includes(pemBody), `${path.relative(data, f)} does not hold the PEM in clear`);
  });

  it('refuses a snake_case credential and an agent that cannot open PRs, in one line with the exit code', () => {
    const file = path.join(tmp('cadre-int-cli-snake-'), 'app.json');
    writeFileSync(file, JSON.stringify({ app_id: 1, installation_id: 2, private_key_pem: pem, webhook_secret: 'ab'.repeat(32) }));
    const snake = run('integration', 'secret', file);
    assert.equal(snake.status, 1, snake.stdout);
    assert.equal(snake.stderr.trim().split('\n').length, 1, snake.stderr);
    assert.match(snake.stderr, /PascalCase|AppID/);
    const agent = run('integration', 'add', 'octo-org/service', '--installation', '1', '--agent', 'observe-ai', '--no-verify');
    assert.equal(agent.status, 1, agent.stdout);
    assert.match(agent.stderr.trim(), /observe-ai/);
    const usage = run('integration', 'add', 'not-a-repo', '--installation', 'x', '--agent', 'coder-ai');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr.trim(), /--installation must be a positive whole number/);
  });
});
