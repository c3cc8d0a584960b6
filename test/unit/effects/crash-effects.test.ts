/**
 * Exactly-once side effects across SIGKILL: a child process runs the engine on a real store and is
 * killed (with its git children) at each ledger boundary; a second child resumes. The effects are then
 * counted in the world: `cadre/*` branches and registered worktrees in the repository, deliveries at a
 * real HTTP receiver.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const CHILD = path.join(__dirname, 'effects-child.ts');
const KEY_HASH = 'a'.repeat(64); // effects-child.ts CHILD_KEY_HASH
const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

interface ChildRun { stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null }

function runChild(dataDir: string, args: string[], env: Record<string, string>, opts: { killOn?: () => boolean } = {}): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, ...args], {
      // Its own process group: a kill at a boundary takes its git children too.
      detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: path.join(dataDir, 'tmp'), ...env },
    });
    let stdout = '';
    let stderr = '';
    const watchdog = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 90_000);
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ stdout, stderr, code, signal });
    });
    if (opts.killOn) {
      const poll = setInterval(() => {
        if (child.exitCode !== null || child.signalCode !== null) return clearInterval(poll);
        if (opts.killOn!()) {
          clearInterval(poll);
          try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
        }
      }, 2);
    }
  });
}

function newRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-fx-repo-')));
  sh(dir, 'init', '-q', '-b', 'main');
  sh(dir, 'config', 'user.name', 'Test');
  sh(dir, 'config', 'user.email', 'test@example.com');
  sh(dir, 'config', 'commit.gpgsign', 'false');
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'src/config.ts'), `export const awsKey = "${'AKIA' + 'Z7QRSTUVWXY2345A'}";\n`);
  sh(dir, 'add', '.');
  sh(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

function newDataDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'cadre-fx-data-'));
  mkdirSync(path.join(d, 'tmp'));
  return d;
}

const cadreBranches = (repo: string) => sh(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/cadre/').split('\n').filter(Boolean);
const worktrees = (repo: string) => sh(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '));

interface Delivery { id: string; key: string; signature: string; body: string }

async function receiver(onDelivery?: (d: Delivery) => void): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
      const d = { id: String(req.headers['x-cadre-delivery'] ?? ''), key: String(req.headers['idempotency-key'] ?? ''), signature: String(req.headers['x-cadre-signature'] ?? ''), body };
      deliveries.push(d);
      res.writeHead(200).end('ok', () => onDelivery?.(d));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries, server };
}

describe('side effects across SIGKILL (ledger boundaries)', function () {
  this.timeout(240_000);
  const cleanup: string[] = [];
  after(() => { for (const d of cleanup) rmSync(d, { recursive: true, force: true }); });

  for (const at of ['intent', 'worktree', 'effect', 'outcome'] as const) {
    it(`coder-ai refactor killed at "${at}": exactly one cadre/* branch with the step's commit, no worktree left`, async () => {
      const repo = newRepo();
      const data = newDataDir();
      cleanup.push(repo, data);
      const head = sh(repo, 'rev-parse', 'HEAD').trim();
      // "worktree": killed from outside as soon as git lists the temporary worktree (mid-effect).
      const first = at === 'worktree'
        // A `worktree list` that fails reads a worktree being added (no commondir yet): a kill there is the worst case.
        ? await runChild(data, ['start-refactor', repo], {}, { killOn: () => { try { return worktrees(repo).length > 1; } catch { return true; } } })
        : await runChild(data, ['start-refactor', repo], { KILL_AT: at, KILL_KEY: 'coder-ai:refactor' });
      assert.equal(first.signal, 'SIGKILL', `the first run should die at "${at}" (stdout: ${first.stdout}; stderr: ${first.stderr.slice(-2000)})`);
      const id = /accepted (\S+)/.exec(first.stdout)?.[1];
      assert.ok(id, 'the execution was accepted before the kill');
      if (at === 'worktree') assert.ok(readdirSync(path.join(repo, '.git', 'worktrees')).length > 0, 'the crash left a registered worktree');

      const second = await runChild(data, ['resume'], {});
      assert.equal(second.code, 0, second.stderr.slice(-2000));
      assert.match(second.stdout, new RegExp(`settled ${id} completed`), second.stdout + second.stderr.slice(-2000));

      const branches = cadreBranches(repo);
      assert.equal(branches.length, 1, `exactly one branch: ${branches.join(', ')}`);
      assert.doesNotMatch(branches[0]!, /-\d+$/, 'never suffixed -2 on resume');
      assert.match(sh(repo, 'log', '-1', '--format=%B', branches[0]!), new RegExp(`^Cadre-Execution: ${id}:0$`, 'm'));
      assert.equal(sh(repo, 'rev-parse', `${branches[0]}~1`).trim(), head, 'one commit on top of HEAD');
      assert.deepEqual(worktrees(repo), [`worktree ${repo}`], 'no registered worktree but the main one');
      assert.deepEqual(readdirSync(path.join(data, 'tmp')).filter((n) => n.startsWith('cadre-wt-')), [], 'no worktree directory left');
      assert.equal(sh(repo, 'rev-parse', 'HEAD').trim(), head, 'the user branch is untouched');
    });
  }

  for (const at of ['intent', 'effect', 'outcome'] as const) {
    it(`task callback killed at "${at}": ${at === 'effect' ? 'sent again with the same delivery id' : 'delivered exactly once'}, signed with the owner key after the restart`, async () => {
      const data = newDataDir();
      cleanup.push(data);
      const rx = await receiver();
      try {
        const first = await runChild(data, ['start-task', rx.url], { KILL_AT: at, KILL_KEY: 'callback' });
        assert.equal(first.signal, 'SIGKILL', `the first run should die at "${at}" (stderr: ${first.stderr.slice(-2000)})`);
        const before = rx.deliveries.length;
        assert.equal(before, at === 'intent' ? 0 : 1);
        const second = await runChild(data, ['resume'], {});
        assert.equal(second.code, 0, second.stderr.slice(-2000));
        const expected = at === 'effect' ? 2 : 1;
        assert.equal(rx.deliveries.length, expected, `deliveries: ${rx.deliveries.map((d) => d.id).join(', ')}`);
        const ids = new Set(rx.deliveries.map((d) => d.id));
        assert.equal(ids.size, 1, 'one delivery id for every copy');
        for (const d of rx.deliveries) {
          assert.match(d.id, /^eff_[0-9a-f]{24}$/);
          assert.equal(d.key, d.id, 'Idempotency-Key carries the delivery id');
          assert.equal(d.signature, `sha256=${createHmac('sha256', KEY_HASH).update(d.body).digest('hex')}`, 'signed with the owner key hash');
          assert.equal(d.body, rx.deliveries[0]!.body, 'the same body every time');
        }
      } finally {
        rx.server.close();
      }
    });
  }

  it('the receiver answers 200 and then SIGKILLs the server: after the restart the copy carries the same delivery id', async () => {
    const data = newDataDir();
    cleanup.push(data);
    let killNow = false;
    const rx = await receiver(() => (killNow = true));
    try {
      const first = await runChild(data, ['start-task', rx.url], {}, { killOn: () => killNow });
      assert.equal(first.signal, 'SIGKILL');
      const second = await runChild(data, ['resume'], {});
      assert.equal(second.code, 0, second.stderr.slice(-2000));
      // The kill may land before or after the outcome record: one delivery, or two with one id.
      assert.ok(rx.deliveries.length >= 1 && rx.deliveries.length <= 2, `deliveries: ${rx.deliveries.length}`);
      assert.equal(new Set(rx.deliveries.map((d) => d.id)).size, 1);
    } finally {
      rx.server.close();
    }
  });

  it('a SIGKILL loop at random moments (bounded): one branch, no worktree, one callback id per task', async () => {
    const repo = newRepo();
    const data = newDataDir();
    cleanup.push(repo, data);
    const rx = await receiver();
    try {
      const first = await runChild(data, ['start-refactor', repo], {}, { killOn: () => false });
      assert.equal(first.code, 0, first.stderr.slice(-2000));
      const id = /accepted (\S+)/.exec(first.stdout)?.[1];
      // A fresh refactor and a task in the same data directory, killed 6 times at random moments while they run.
      const fresh = newRepo();
      cleanup.push(fresh);
      const accepted: string[] = [];
      for (let i = 0; i < 6; i++) {
        const delay = 300 + Math.floor(Math.random() * 2500);
        const t0 = Date.now();
        const mode = i === 0 ? ['start-refactor', fresh] : i === 1 ? ['start-task', rx.url] : ['resume'];
        const run = await runChild(data, mode, {}, { killOn: () => Date.now() - t0 > delay });
        accepted.push(...[...run.stdout.matchAll(/accepted (\S+)/g)].map((m) => m[1]!));
      }
      const last = await runChild(data, ['resume'], {});
      assert.equal(last.code, 0, last.stderr.slice(-2000));
      assert.ok(id);
      assert.equal(cadreBranches(repo).length, 1, cadreBranches(repo).join(', '));
      // The fresh refactor has its one branch if it was accepted before its kill, else none.
      const freshAccepted = accepted.some((a) => a.startsWith('act_'));
      assert.equal(cadreBranches(fresh).length, freshAccepted ? 1 : 0, cadreBranches(fresh).join(', '));
      for (const r of [repo, fresh]) assert.deepEqual(worktrees(r), [`worktree ${r}`]);
      const taskAccepted = accepted.some((a) => a.startsWith('task_'));
      assert.equal(new Set(rx.deliveries.map((d) => d.id)).size, taskAccepted ? 1 : 0, 'one delivery id for the one task');
      if (taskAccepted) assert.ok(rx.deliveries.length >= 1, 'the accepted task was delivered');
    } finally {
      rx.server.close();
    }
  });

  it('a SIGKILL loop as soon as the cadre/* branch appears: one branch per execution step', async () => {
    const repo = newRepo();
    const data = newDataDir();
    cleanup.push(repo, data);
    const appeared = () => { try { return cadreBranches(repo).length > 0; } catch { return false; } };
    const first = await runChild(data, ['start-refactor', repo], {}, { killOn: appeared });
    const id = /accepted (\S+)/.exec(first.stdout)?.[1];
    assert.ok(id, first.stderr);
    // Killed again as soon as it runs (bounded), then left to finish.
    for (let i = 0; i < 2; i++) {
      let started = false;
      await runChild(data, ['resume'], {}, { killOn: () => (started = started || appeared()) });
    }
    const last = await runChild(data, ['resume'], {});
    assert.equal(last.code, 0, last.stderr.slice(-2000));
    assert.deepEqual(cadreBranches(repo).length, 1, cadreBranches(repo).join(', '));
    assert.deepEqual(worktrees(repo), [`worktree ${repo}`]);
  });
});
