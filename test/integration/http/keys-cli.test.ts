/**
 * `cadre keys create|list|revoke` (dist/cli.js) against a running server (through its admin API) and
 * against a stopped one (directly on the store, under the data directory's lock).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { ensureBuilt, ROOT, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

const CLI_JS = path.join(ROOT, 'dist', 'cli.js');
const ADMIN_KEY = 'cadre_1b87PvNCXWxAygwMvaFrb5uwcufDEk0mGVinP__9fq4';
/** No `cadre auth login` of the person running the tests is consulted. */
const CONFIG_DIR = tempDir('cadre-keys-cli-conf-');

function cadre(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI_JS, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CADRE_API_KEY: '', CADRE_HOME: '', CADRE_CONFIG_DIR: CONFIG_DIR, ...env }, timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function status(url: string, key: string): Promise<{ code: number; limit: string | undefined }> {
  const res = await request(`${url}/v1/info`, { headers: { authorization: `Bearer ${key}` } });
  await res.body.dump();
  return { code: res.statusCode, limit: res.headers['x-ratelimit-limit'] as string | undefined };
}

/** Every file of the store in `dir` (a snapshot and/or its journal), whatever its layout. */
function storeText(dir: string): string {
  return readdirSync(dir).filter((f) => f.startsWith('store')).sort().map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
}

describe('cadre keys', function () {
  this.timeout(60_000);
  const running: ServerProcess[] = [];
  before(() => {
    ensureBuilt();
    assert.ok(existsSync(CLI_JS), 'dist/cli.js is built');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => stop(p)));
  });

  it('goes through the running server\'s API with CADRE_API_KEY: create, list, revoke', async () => {
    const dir = tempDir();
    const server = await startStandalone(dir, { CADRE_API_KEY: ADMIN_KEY });
    running.push(server);
    const env = { CADRE_API_KEY: ADMIN_KEY };

    const created = cadre(['keys', 'create', '--label', 'ci', '--plan', 'startup', '-d', dir], env);
    assert.equal(created.code, 0, created.stderr);
    const id = /^Created API key (key_[0-9a-f]+) \(role operator, plan startup, label "ci"\)$/m.exec(created.stdout)?.[1];
    const key = /^Key \(shown once; only its hash is stored\): (cadre_\S+)$/m.exec(created.stdout)?.[1];
    assert.ok(id && key, created.stdout);
    assert.deepEqual(await status(server.url, key), { code: 200, limit: '17' }, 'the new key works, on its plan');

    const list = cadre(['keys', 'list', '-d', dir], env);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^ID\s+PREFIX\s+ROLE\s+PLAN\s+CREATED\s+STATUS\s+LABEL$/m);
    assert.match(list.stdout, new RegExp(`^${id}\\s+cadre_[A-Za-z0-9_-]{8}…\\s+operator\\s+startup\\s+\\S+\\s+active\\s+ci$`, 'm'));
    assert.ok(!list.stdout.includes(key), 'the key itself is never listed');

    const json = cadre(['keys', 'list', '--json', '-d', dir], env);
    const keys = JSON.parse(json.stdout) as Array<{ id: string; revokedAt: string | null }>;
    assert.ok(keys.some((k) => k.id === id && k.revokedAt === null));

    const revoked = cadre(['keys', 'revoke', id, '-d', dir], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, new RegExp(`^Revoked API key ${id} \\(label "ci"\\) at \\S+; its sessions are ended$`, 'm'));
    assert.equal((await status(server.url, key)).code, 401, 'the revoked key is refused at once');

    const unknown = cadre(['keys', 'revoke', 'key_nope', '-d', dir], env);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr.trim(), 'cadre: no API key with id "key_nope"');
  });

  it('refuses with one line when a server owns the data directory and CADRE_API_KEY is absent or wrong', async () => {
    const dir = tempDir();
    const server = await startStandalone(dir, { CADRE_API_KEY: ADMIN_KEY });
    running.push(server);
    const storeBefore = storeText(dir);
    const r = cadre(['keys', 'create', '-d', dir]);
    assert.equal(r.code, 4, 'exit 4: no key (docs/cli.md "Exit codes")');
    assert.equal(r.stderr.trim(), `cadre: a Cadre server (pid ${server.child.pid}) owns ${dir}; set CADRE_API_KEY to one of its API keys (or cadre auth login) to manage keys through its API`);
    assert.equal(storeText(dir), storeBefore, 'the store was not touched');
    const wrong = cadre(['keys', 'list', '-d', dir], { CADRE_API_KEY: 'cadre_wrong' });
    assert.equal(wrong.code, 4);
    assert.match(wrong.stderr.trim(), /^cadre: the server at http:\/\/127\.0\.0\.1:\d+ refused the API key from CADRE_API_KEY: the API key is not valid/);
  });

  it('works on the store directly when no server runs, taking and releasing the lock; a later server honours the result', async () => {
    const dir = tempDir();
    // First start creates the store; stop it.
    const first = await startStandalone(dir);
    await stop(first);

    const created = cadre(['keys', 'create', '--label', 'offline', '--plan', 'growth', '--json', '-d', dir]);
    assert.equal(created.code, 0, created.stderr);
    const c = JSON.parse(created.stdout) as { id: string; key: string; plan: string; label: string };
    assert.deepEqual([c.plan, c.label], ['growth', 'offline']);
    assert.ok(!existsSync(path.join(dir, 'cadre.lock')), 'the lock is released');
    assert.ok(!storeText(dir).includes(c.key), 'only the hash is stored');

    const doomed = JSON.parse(cadre(['keys', 'create', '--json', '-d', dir]).stdout) as { id: string; key: string };
    const list = JSON.parse(cadre(['keys', 'list', '--json', '-d', dir]).stdout) as Array<{ id: string; label: string }>;
    assert.deepEqual(list.map((k) => k.label), ['first start', 'offline', 'cli']);
    const rev = cadre(['keys', 'revoke', doomed.id, '-d', dir]);
    assert.equal(rev.code, 0, rev.stderr);
    assert.ok(!existsSync(path.join(dir, 'cadre.lock')));

    const server = await startStandalone(dir);
    running.push(server);
    assert.deepEqual(await status(server.url, c.key), { code: 200, limit: '42' });
    assert.equal((await status(server.url, doomed.key)).code, 401);
  });

  it('validates its options', () => {
    const r = cadre(['keys', 'create', '--plan', 'platinum', '-d', tempDir()]);
    assert.equal(r.code, 2, 'a usage error');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /argument 'platinum' is invalid\. Allowed choices are startup, growth, scale, enterprise/);
  });
});
