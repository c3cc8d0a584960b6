import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ensureBuilt, ROOT, stop } from '../../support/server-process';
import { freshKey, startFleetServer } from '../../support/fleet-server';

describe('cadre CLI against a running server', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let key: string;
  before(async () => {
    ensureBuilt();
    server = await startFleetServer();
    key = await freshKey(server.url);
  });
  after(async () => stop(server));

  const cadre = (...args: string[]) => spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), ...args, '--url', server.url], { env: { ...process.env, CADRE_API_KEY: key, CADRE_CONFIG_DIR: '/nonexistent-cadre-conf' }, encoding: 'utf8', timeout: 30_000 });

  it('runs a workflow and follows its RIGOR progress with --watch', () => {
    const r = cadre('workflow', 'run', 'secure', 'scan', 'the', 'repo', '--capability', 'SECURE', '--watch');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^wf_\w+ accepted$/m);
    assert.match(r.stdout, /security-ai · Research/);
    assert.match(r.stdout, /Review: all 21 gates pass/);
    assert.match(r.stdout, /^completed\b/m);
  });

  it('submits a task verb and shows its status', () => {
    const r = cadre('security', 'check', 'the', 'secrets');
    assert.equal(r.status, 0, r.stderr);
    const id = /^(task_\w+)/.exec(r.stdout)![1]!;
    const s = cadre('status', id, '--json');
    assert.equal(s.status, 0, s.stderr);
    assert.equal((JSON.parse(s.stdout) as { taskId: string }).taskId, id);
  });

  it('prints the fleet schedule and the agents', () => {
    const f = cadre('fleet', 'schedule');
    assert.equal(f.status, 0, f.stderr);
    assert.equal(f.stdout.trim().split('\n').length, 26);
    assert.match(f.stdout, /^observe-ai\s+24h/m);
    const a = cadre('agents', 'list');
    assert.equal(a.stdout.trim().split('\n').length, 25);
  });

  it('says in one line what went wrong', () => {
    const r = cadre('workflow', 'run', 'no-such-workflow', 'x');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^cadre: unknown workflow "no-such-workflow"/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
