import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { hashKey } from '../../../server/src/auth/api-keys';
import { ensureBuilt, startServer, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

/** The store's bytes on disk: its snapshot (store.json, when written yet) and its journals (docs/decisions.md). */
function storeText(dir: string): string {
  const names = readdirSync(dir).filter((n) => n === 'store.json' || /^store\.journal-\d+\.jsonl$/.test(n)).sort();
  return names.map((n) => readFileSync(path.join(dir, n), 'utf8')).join('\n');
}

describe('standalone server process', function () {
  this.timeout(60_000);
  const running: ServerProcess[] = [];
  before(ensureBuilt);
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => (p.child.exitCode === null ? (p.child.kill('SIGKILL'), p.exited) : p.exited)));
  });

  it('prints the listening line, a first API key once, serves /v1/health and shuts down on SIGTERM', async () => {
    const dir = tempDir();
    const first = await startStandalone(dir);
    running.push(first);
    const keyLine = first.stdout.find((l) => l.startsWith('New API key'));
    assert.ok(keyLine, 'a new key is printed on first start');
    const key = keyLine!.split(': ')[1]!;
    assert.match(key, /^cadre_[A-Za-z0-9_-]{43}$/);
    const res = await fetch(`${first.url}/v1/health`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { status: string; service: string; pid: number };
    assert.equal(body.service, 'cadre');
    assert.equal(body.pid, first.child.pid);
    assert.ok(existsSync(path.join(dir, 'cadre.lock')));
    first.child.kill('SIGTERM');
    assert.deepEqual(await first.exited, { code: 0, signal: null });
    assert.ok(!existsSync(path.join(dir, 'cadre.lock')), 'the lock is released');
    const store = storeText(dir);
    assert.ok(!store.includes(key), 'the key is not stored in clear');
    assert.ok(store.includes(hashKey(key)), 'its hash is');

    const second = await startStandalone(dir);
    running.push(second);
    assert.equal(second.stdout.filter((l) => l.startsWith('New API key')).length, 0, 'no new key on later starts');
    await stop(second);
  });

  it('accepts CADRE_API_KEY, storing only its hash', async () => {
    const dir = tempDir();
    const key = 'cadre_mbPiz8GlLQd9V6PIQ3YH5P97vcJBKRen8Q4jcf-UI1Q';
    const p = await startStandalone(dir, { CADRE_API_KEY: key });
    running.push(p);
    assert.equal(p.stdout.filter((l) => l.startsWith('New API key')).length, 0);
    await stop(p);
    const store = storeText(dir);
    assert.ok(!store.includes(key));
    assert.ok(store.includes(hashKey(key)));
  });

  it('lets one process own a data directory: a second attaches, a dead owner\'s lock is recovered', async () => {
    const dir = tempDir();
    const owner = await startStandalone(dir);
    running.push(owner);
    const storeBefore = storeText(dir);
    const second = startServer(['--standalone', '--port', '0', '--data-dir', dir]);
    running.push(second);
    const m = await second.line(/^Cadre is already running for .* at (http:\S+) \(pid (\d+)\); attached/);
    assert.equal(m[1], owner.url);
    assert.equal(Number(m[2]), owner.child.pid);
    assert.equal((await second.exited).code, 0);
    assert.equal(storeText(dir), storeBefore, 'the second process did not write the store');
    const lock = JSON.parse(readFileSync(path.join(dir, 'cadre.lock'), 'utf8')) as { pid: number };
    assert.equal(lock.pid, owner.child.pid);

    owner.child.kill('SIGKILL');
    await owner.exited;
    assert.ok(existsSync(path.join(dir, 'cadre.lock')), 'a killed owner leaves its lock behind');
    const next = await startStandalone(dir);
    running.push(next);
    const recovered = JSON.parse(readFileSync(path.join(dir, 'cadre.lock'), 'utf8')) as { pid: number };
    assert.equal(recovered.pid, next.child.pid);
    await stop(next);
  });

  it('reports a port taken by another program and listens on another one', async () => {
    const other: Server = createServer((_req, res) => res.end('not cadre'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    const port = (other.address() as { port: number }).port;
    try {
      const p = startServer(['--standalone', '--port', String(port), '--data-dir', tempDir()]);
      running.push(p);
      const m = await p.line(/^Cadre listening on http:\/\/127\.0\.0\.1:(\d+)$/);
      assert.notEqual(Number(m[1]), port);
      assert.ok(p.stderr.some((l) => l.includes(`port ${port} is in use by another program (not Cadre)`)), p.stderr.join('\n'));
      await stop(p);
    } finally {
      other.close();
    }
  });

  it('refuses bad options with one readable line and exit code 2', async () => {
    const p = startServer(['--standalone', '--port', 'abc']);
    running.push(p);
    const { code } = await p.exited;
    assert.equal(code, 2);
    assert.match(p.stderr[0]!, /^cadre: --port must be an integer from 0 to 65535 \(got "abc"\)$/);
  });

  it('refuses an invalid configuration file with its file, line and key', async () => {
    const dir = tempDir();
    const ws = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(ws, '.cadre.yaml'), 'agents:\n  coder-ai:\n    acmf_mode: SOMETIMES\n');
    const p = startServer(['--standalone', '--port', '0', '--data-dir', dir, '--workspace', ws]);
    running.push(p);
    const { code } = await p.exited;
    assert.equal(code, 1);
    assert.match(p.stderr.join('\n'), /\.cadre\.yaml:3:\d+: agents\.coder-ai\.acmf_mode/);
    assert.ok(!existsSync(path.join(dir, 'cadre.lock')), 'a failed start releases the lock');
  });

  it('refuses a broken skill module with one line naming it', async () => {
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    const bad = path.join(tempDir('cadre-mod-'), 'bad-skills.cjs');
    writeFileSync(bad, "module.exports = { skills: [{ agentId: 'coder-ai' }] };\n");
    const p = startServer(['--standalone', '--port', '0', '--data-dir', dir, '--skill-module', bad]);
    running.push(p);
    const { code } = await p.exited;
    assert.equal(code, 1);
    assert.match(p.stderr.join('\n'), /bad-skills\.cjs: skills\[0\] is not a skill/);
  });
});
