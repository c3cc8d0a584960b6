/**
 * The built CLI (dist/cli.js) as a child process against one real server on an ephemeral port: every
 * command group with --json parsed and checked, --watch as plain text and through a pseudo-terminal,
 * a progress stream dropped in the middle (resumed with Last-Event-ID), the natural-language form,
 * and the documented exit codes with one-line errors (bad arguments 2, failed 1, unreachable 3,
 * revoked key 4, waiting for approval 5).
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { api, KEY, freshKey, startFleetServer, type Json } from '../../support/fleet-server';
import { ensureBuilt, ROOT, stop } from '../../support/server-process';

const CLI = path.join(ROOT, 'dist/cli.js');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking the event loop (the test's own proxy must keep serving meanwhile). */
function cadre(args: string[], env: NodeJS.ProcessEnv = {}, opts: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, NO_COLOR: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => void (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cadre ${args.join(' ')} did not end within ${opts.timeoutMs ?? 60_000} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

function oneLine(r: Run, re: RegExp): void {
  assert.equal(r.stderr.trim().split('\n').length, 1, `one line on stderr: ${r.stderr}`);
  assert.match(r.stderr.trim(), re);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

/** A TCP proxy that cuts the first event-stream response after `cutAfter` bytes; later connections pass. */
function dropOnceProxy(target: string, cutAfter: number): Promise<{ url: string; dropped: () => boolean; close: () => void }> {
  const t = new URL(target);
  let dropped = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(t.port), t.hostname);
    let isStream = false;
    let seen = 0;
    client.on('data', (c: Buffer) => {
      const text = c.toString('latin1');
      if (!isStream && text.startsWith('GET /api/admin/events/stream')) isStream = true;
      // The server answers only requests addressed to itself (its Host check): name it, not the proxy.
      upstream.write(Buffer.from(text.replace(/^host: .*$/im, `host: ${t.host}`), 'latin1'));
    });
    upstream.on('data', (c: Buffer) => {
      if (isStream && !dropped) {
        seen += c.length;
        if (seen >= cutAfter) {
          dropped = true;
          client.write(c.subarray(0, c.length - (seen - cutAfter)));
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      client.write(c);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, dropped: () => dropped, close: () => server.close() })));
}

describe('cadre CLI (built) against a real server', function () {
  this.timeout(120_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let key: string;
  let configDir: string;
  let project: string;
  /** The env of a logged-out user with a key in CADRE_API_KEY. */
  let env: NodeJS.ProcessEnv;
  before(async () => {
    ensureBuilt();
    server = await startFleetServer();
    key = await freshKey(server.url);
    configDir = mkdtempSync(path.join(tmpdir(), 'cadre-cli-conf-'));
    project = mkdtempSync(path.join(tmpdir(), 'cadre-cli-proj-'));
    writeFileSync(path.join(project, 'calc.ts'), 'export function calc(expr: string): number {\n  return eval(expr) as number;\n}\n');
    env = { CADRE_API_KEY: key, CADRE_CONFIG_DIR: configDir, CADRE_PORT: '9', CADRE_HOME: mkdtempSync(path.join(tmpdir(), 'cadre-cli-home-')) };
  });
  after(async () => stop(server));

  const run = (args: string[], extra: NodeJS.ProcessEnv = {}, opts: { cwd?: string; input?: string } = {}) => cadre([...args, '--url', server.url], { ...env, ...extra }, opts);
  const json = async (args: string[]): Promise<Json> => {
    const r = await run([...args, '--json']);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Json;
  };

  it('prints data as JSON on every data command', async () => {
    const agents = await json(['agents', 'list']);
    assert.equal((agents['agents'] as unknown[]).length, 25);
    const one = await json(['agents', 'status', 'review-ai']);
    assert.equal(one['id'], 'review-ai');
    assert.equal((one['acmf'] as Json)['mode'], 'AUTONOMOUS');
    const fleet = await json(['fleet', 'status']);
    assert.equal(fleet['agents'], 25);
    const schedule = await json(['fleet', 'schedule']);
    assert.equal((schedule['agents'] as unknown[]).length, 25);
    const wfs = await json(['workflow', 'list']);
    assert.equal((wfs['workflows'] as Json[]).length, 15);
    assert.deepEqual((wfs['workflows'] as Json[]).find((w) => w['id'] === 'secure')!['agents'], ['security-ai', 'threathunter-ai']);
    const health = await json(['rigor', 'health']);
    assert.equal(health['gates'], 21);
    assert.equal(health['status'], 'ok');
    const status = await json(['status']);
    assert.equal((status['agents'] as Json)['total'], 25);
    assert.equal(status['embedded'], false);
    const h = await json(['health']);
    assert.equal(h['status'], 'ok');
    const approvals = await json(['approvals']);
    assert.ok(Array.isArray(approvals['approvals']));
  });

  it('runs a task verb and follows it with --watch in plain lines: five phases, bar, confidence, gates, result', async () => {
    const r = await run(['security', 'scan', 'for', 'secrets', '--source', project, '--watch']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /\x1b\[/, 'no escape sequences when stdout is not a terminal');
    assert.match(r.stdout, /^task_\w+ \w+ on .+; agents: security-ai, threathunter-ai$/m);
    assert.match(r.stdout, /^ {2}security-ai scan {2}\[##########\] 100% {2}Research Completed, Inspect Completed, Generate Completed, Optimize Completed, Review Completed · confidence \d\.\d\d$/m);
    assert.match(r.stdout, /^ {2}security-ai · Review: all 21 gates pass$/m);
    assert.match(r.stdout, /^completed: /m);
    assert.match(r.stdout, /^result:$/m);
  });

  it('--watch through a pseudo-terminal redraws the running steps in color', async function () {
    if (spawnSync('script', ['--version']).status !== 0) this.skip();
    const cmd = [process.execPath, CLI, 'workflow', 'run', 'secure', 'scan', 'the', 'repo', '--watch', '--url', server.url].map((a) => `'${a}'`).join(' ');
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'cadre-tty-')), 'typescript');
    const r = spawnSync('script', ['-qfec', cmd, out], { env: { ...process.env, ...env, NO_COLOR: '', TERM: 'xterm', COLUMNS: '160' }, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const text = readFileSync(out, 'utf8');
    assert.match(text, /\x1b\[\d+A\x1b\[0J/, 'moves the cursor up over the live lines and clears them');
    assert.match(text, /\x1b\[32m✔ (Research|Res)\x1b\[0m/, 'completed phases in green');
    assert.match(text, /✔ security-ai completed/);
    // NO_COLOR on the same terminal: plain lines.
    const plain = spawnSync('script', ['-qfec', cmd, `${out}.plain`], { env: { ...process.env, ...env, NO_COLOR: '1', TERM: 'xterm' }, encoding: 'utf8', timeout: 60_000 });
    assert.equal(plain.status, 0, plain.stdout + plain.stderr);
    assert.doesNotMatch(readFileSync(`${out}.plain`, 'utf8'), /\x1b\[\d+A/);
  });

  it('resumes a progress stream dropped in the middle of a run, with no event lost or repeated', async () => {
    const proxy = await dropOnceProxy(server.url, 1500);
    try {
      const r = await cadre(['workflow', 'run', 'secure', 'scan', 'the', 'repo', '--watch', '--url', proxy.url], env);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.ok(proxy.dropped(), 'the proxy cut the stream');
      assert.match(r.stdout, /^ {2}\(connection dropped; resuming after event \d+\)$/m);
      for (const agent of ['security-ai', 'threathunter-ai']) {
        assert.equal(r.stdout.split('\n').filter((l) => l === `▶ ${agent} ${agent === 'security-ai' ? 'scan' : 'hunt'}`).length, 1, `${agent} started once`);
        assert.equal(r.stdout.split('\n').filter((l) => l.startsWith(`  ${agent} · Review`)).length, 2, `${agent}: one Review phase line and one gates line`);
      }
      assert.match(r.stdout, /^completed: /m);
    } finally {
      proxy.close();
    }
  });

  it('--watch --json prints one typed event per line, ending with the terminal event', async () => {
    const r2 = await run(['workflow', 'run', 'secure', 'scan', '--watch', '--json']);
    assert.equal(r2.status, 0, r2.stderr);
    const events = r2.stdout.trim().split('\n').map((l) => JSON.parse(l) as Json);
    assert.equal(events[0]!['type'], 'execution_started');
    assert.equal(events.at(-1)!['type'], 'execution_completed');
    assert.deepEqual(events.map((e) => e['seq']), events.map((_, i) => i + 1), 'every seq once, in order');
  });

  it('workflow status, runs, cancel, logs of an execution and rigor invoke/status', async () => {
    const started = await json(['workflow', 'run', 'secure', 'scan']);
    const id = started['workflowId'] as string;
    await api(server.url).until(`/api/workflows/${id}/status`);
    const st = await json(['workflow', 'status', id]);
    assert.equal(st['status'], 'completed');
    const text = await run(['status', id]);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^${id} completed 100%`, 'm'));
    assert.match(text.stdout, /^ {2}\s?\d\. security-ai scan: completed/m);
    const runs = await json(['workflow', 'runs', '--limit', '50']);
    assert.ok((runs['workflows'] as Json[]).some((w) => w['workflowId'] === id));
    const logs = await run(['logs', id, '--json']);
    assert.equal(logs.status, 0, logs.stderr);
    const events = logs.stdout.trim().split('\n').map((l) => JSON.parse(l) as Json);
    assert.equal(events.at(-1)!['type'], 'execution_completed');
    const cancelled = await run(['workflow', 'cancel', id]);
    assert.equal(cancelled.status, 1);
    oneLine(cancelled, /^cadre: execution wf_\w+ is already completed/);

    const inv = await json(['rigor', 'invoke', 'security-ai', 'scan for secrets', '--acmf-mode', 'observe', '--source', project]);
    const exec = inv['executionId'] as string;
    await api(server.url).until(`/api/v1/rigor/status/${exec}`);
    const rs = await json(['rigor', 'status', exec]);
    assert.equal(rs['acmfModeCap'], 'OBSERVE');
    assert.equal((rs['gates'] as unknown[]).length, 21);
  });

  it('invoke <agent> <action> with --input JSON and --source, followed to the end', async () => {
    const r = await run(['invoke', 'security-ai', 'scan', '--source', project, '--input', '{}', '--watch']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^act_\w+ \w+: security-ai scan$/m);
    assert.match(r.stdout, /^✔ security-ai completed/m);
    const bad = await run(['invoke', 'security-ai', 'teleport']);
    assert.equal(bad.status, 2);
    oneLine(bad, /^cadre: security-ai has no action "teleport" \(its actions: .*scan/);
    const badJson = await run(['invoke', 'security-ai', 'scan', '--input', '{nope']);
    assert.equal(badJson.status, 2);
    oneLine(badJson, /^cadre: --input is not JSON: /);
  });

  it('routes a plain-words instruction to agents, says why, and runs it with --yes', async () => {
    const dry = await run(['review the payment module for injection bugs', '--dry-run']);
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stderr, /^→ cadre review: review-ai, security-ai \(at ultra\)$/m);
    assert.match(dry.stderr, /^ {2}why: "review", "bugs" point to the review verb \(score 5\)$/m);
    const ran = await run(['scan for leaked secrets', '--yes', '--watch', '--source', project]);
    assert.equal(ran.status, 0, ran.stdout + ran.stderr);
    assert.match(ran.stdout, /^task_\w+ \w+ on .+; agents: security-ai, threathunter-ai$/m);
    const none = await run(['hello there friend']);
    assert.equal(none.status, 2);
    oneLine(none, /^cadre: cannot tell which agents "hello there friend" is for/);
  });

  it('asks before running a plain-words instruction on a terminal; "n" runs nothing', async function () {
    if (spawnSync('script', ['--version']).status !== 0) this.skip();
    const before = ((await json(['workflow', 'runs', '--limit', '100']))['total'] as number);
    const cmd = [process.execPath, CLI, 'run the security workflow end to end', '--url', server.url].map((a) => `'${a}'`).join(' ');
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'cadre-ask-')), 'typescript');
    const r = spawnSync('script', ['-qfec', cmd, out], { input: 'n\n', env: { ...process.env, ...env, TERM: 'xterm' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stdout);
    const text = readFileSync(out, 'utf8');
    assert.match(text, /→ cadre workflow run full-sdlc: req-ai, /);
    assert.match(text, /Run it\? \[Y\/n\]/);
    assert.match(text, /cadre: not run/);
    assert.equal((await json(['workflow', 'runs', '--limit', '100']))['total'], before, 'nothing was submitted');
  });

  it('exits 5 with the command to continue when the execution waits for an approval', async () => {
    const r = await run(['workflow', 'run', 'build', 'crash:planner-ai:9', '--watch']);
    assert.equal(r.status, 5, r.stdout + r.stderr);
    const m = /cadre approve (appr_\w+)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    assert.match(r.stdout, new RegExp(`^wf_\\w+ waits for approval ${m[1]}: cadre approve ${m[1]} \\(or cadre deny ${m[1]}\\), then cadre watch wf_\\w+$`, 'm'));
    const pending = await json(['approvals']);
    assert.ok((pending['approvals'] as Json[]).some((a) => a['id'] === m[1]));
    const denied = await run(['deny', m[1]!, '--reason', 'not today']);
    assert.equal(denied.status, 0, denied.stderr);
    assert.match(denied.stdout, new RegExp(`^${m[1]} denied by key:`, 'm'));
  });

  it('one line and exit 2 for unknown commands, options and bad values; no help dump', async () => {
    for (const [args, re] of [
      [['rigr'], /^cadre: unknown command 'rigr' \(Did you mean rigor\?\)/],
      [['review', '--bogus'], /^cadre: unknown option '--bogus'/],
      [['rigor'], /^cadre: rigor needs a subcommand: invoke, status, health/],
      [['agents', 'mode', 'debug-ai', 'YOLO', '--reason', 'x'], /^cadre: unknown ACMF mode "YOLO"/],
      [['workflow', 'runs', '--limit', 'many'], /^cadre: --limit must be a positive integer/],
      [['completion', 'tcsh'], /^cadre: no completion for "tcsh"/],
    ] as Array<[string[], RegExp]>) {
      const r = await run(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      oneLine(r, re);
    }
    const help = await run(['rigor', 'invoke', '--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Examples:\n {2}\$ cadre rigor invoke security-ai/);
  });

  it('exit 3 and one line when no server answers; exit 1 with the server\'s reason when it refuses', async () => {
    const r = await cadre(['agents', 'list', '--url', 'http://127.0.0.1:9'], env);
    assert.equal(r.status, 3);
    oneLine(r, /^cadre: no Cadre server answers at http:\/\/127\.0\.0\.1:9 \(start one with: cadre serve\)$/);
    const noEmbedded = await cadre(['status', '--no-embedded'], env);
    assert.equal(noEmbedded.status, 3);
    oneLine(noEmbedded, /^cadre: no Cadre server answers at http:\/\/127\.0\.0\.1:9 /);
    // No key and no server: the missing server is what to say (it used to send the user to `cadre auth login`).
    const noKey = await cadre(['store', 'stats'], { ...env, CADRE_API_KEY: '', CADRE_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), 'cadre-cli-nokey-')) });
    assert.equal(noKey.status, 3, noKey.stderr);
    oneLine(noKey, /^cadre: no Cadre server answers at http:\/\/127\.0\.0\.1:9 \(start one with: cadre serve\)$/);
    const refused = await run(['workflow', 'run', 'no-such-workflow', 'x']);
    assert.equal(refused.status, 1);
    oneLine(refused, /^cadre: unknown workflow "no-such-workflow"/);
  });

  it('exit 4 and one line with a revoked key or none', async () => {
    const made = await api(server.url).post('/v1/admin/keys', { label: 'to revoke', plan: 'enterprise', role: 'operator' });
    assert.equal(made.status, 201, made.text);
    assert.equal((await api(server.url).call('DELETE', `/v1/admin/keys/${made.body['id']}`)).status, 200);
    const r = await run(['agents', 'list'], { CADRE_API_KEY: made.body['key'] as string });
    assert.equal(r.status, 4, r.stderr);
    oneLine(r, /^cadre: the server at http:\/\/127\.0\.0\.1:\d+ refused the API key from CADRE_API_KEY: /);
    const none = await run(['agents', 'list'], { CADRE_API_KEY: '' });
    assert.equal(none.status, 4);
    oneLine(none, /^cadre: no API key for http:\/\/127\.0\.0\.1:\d+: run cadre auth login/);
  });

  it('auth login keeps the key in a 0600 file that every command then uses; status and logout', async () => {
    const conf = mkdtempSync(path.join(tmpdir(), 'cadre-auth-'));
    const e = { CADRE_API_KEY: '', CADRE_CONFIG_DIR: conf };
    const wrong = await run(['auth', 'login', '--key', 'cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e00'], e);
    assert.equal(wrong.status, 4, wrong.stderr);
    assert.equal(existsSync(path.join(conf, 'credentials.json')), false, 'a refused key is not kept');
    const login = await run(['auth', 'login', '--key-stdin'], e, { input: `${key}\n` });
    assert.equal(login.status, 0, login.stderr);
    const file = path.join(conf, 'credentials.json');
    if (process.platform !== 'win32') assert.equal(statSync(file).mode & 0o777, 0o600);
    // No --url and no CADRE_API_KEY: the login's server and key.
    const list = await cadre(['agents', 'list', '--json'], { ...env, ...e });
    assert.equal(list.status, 0, list.stderr);
    assert.equal((JSON.parse(list.stdout) as { agents: unknown[] }).agents.length, 25);
    const st = await cadre(['auth', 'status', '--json'], { ...env, ...e });
    assert.equal(st.status, 0, st.stderr);
    assert.equal((JSON.parse(st.stdout) as Json)['accepted'], true);
    const out = await cadre(['auth', 'logout'], { ...env, ...e });
    assert.equal(out.status, 0, out.stderr);
    const after = await cadre(['auth', 'status'], { ...env, ...e, CADRE_PORT: '9' });
    assert.equal(after.status, 4);
  });

  it('webhook add, list, test, deliveries, redeliver and remove against the server\'s webhook routes', async () => {
    const added = await run(['webhook', 'add', 'https://example.com/hooks/cadre', '--event', 'deployment.failed', '--description', 'cli test']);
    assert.equal(added.status, 0, added.stderr);
    const id = /^(wh_\w+) https:\/\/example\.com\/hooks\/cadre \(deployment\.failed\)$/m.exec(added.stdout)?.[1];
    assert.ok(id, added.stdout);
    assert.match(added.stdout, /^signing secret \(shown once; verify the webhook-signature header with it\): \S{43}$/m);
    const list = await json(['webhook', 'list']);
    const hook = (list['webhooks'] as Json[]).find((w) => w['id'] === id)!;
    assert.deepEqual(hook['events'], ['deployment.failed']);
    const test = await json(['webhook', 'test', id]);
    const delivery = (test['delivery'] as Json)['id'] as string;
    assert.match(delivery, /^whd_/);
    const deliveries = await json(['webhook', 'deliveries', id]);
    assert.ok((deliveries['deliveries'] as Json[]).some((d) => d['id'] === delivery));
    const again = await run(['webhook', 'redeliver', id, delivery]);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`^${delivery} queued again as whd_\\w+`, 'm'));
    const removed = await run(['webhook', 'remove', id]);
    assert.equal(removed.status, 0, removed.stderr);
    const gone = await run(['webhook', 'deliveries', id]);
    assert.equal(gone.status, 1);
    oneLine(gone, /^cadre: /);
    const bad = await run(['webhook', 'add', 'https://example.com/h', '--event', 'nope.event']);
    assert.equal(bad.status, 2);
    oneLine(bad, /^cadre: unknown event "nope\.event"/);
  });

  it("tenant create, key, list, update, me and delete against the server's tenant routes", async () => {
    const admin = { CADRE_API_KEY: KEY };
    const created = await run(['tenant', 'create', 'cli-acme', '--quota', 'projects=2'], admin);
    assert.equal(created.status, 0, created.stderr);
    const id = /^(tnt_\w+) cli-acme$/m.exec(created.stdout)?.[1];
    assert.ok(id, created.stdout);
    assert.match(created.stdout, /usage: .*projects 0\/2/);
    assert.match(created.stdout, new RegExp(`^next: cadre tenant key ${id}`, 'm'));
    const key = await run(['tenant', 'key', id, '--label', 'acme ci', '--role', 'operator', '--json'], admin);
    assert.equal(key.status, 0, key.stderr);
    const k = JSON.parse(key.stdout) as Json;
    assert.deepEqual([k['tenantId'], k['role']], [id, 'operator']);
    const me = await run(['tenant', 'me', '--json'], { CADRE_API_KEY: k['key'] as string });
    assert.equal(me.status, 0, me.stderr);
    assert.equal((JSON.parse(me.stdout) as Json)['id'], id);
    const updated = await run(['tenant', 'update', id, '--quota', 'projects=none'], admin);
    assert.equal(updated.status, 0, updated.stderr);
    assert.match(updated.stdout, /projects 0\/∞/);
    const list = await run(['tenant', 'list'], admin);
    assert.match(list.stdout, new RegExp(`${id}\\s+cli-acme`));
    // A tenant's own key may not manage tenants: one readable line, non-zero.
    const refused = await run(['tenant', 'list'], { CADRE_API_KEY: k['key'] as string });
    assert.notEqual(refused.status, 0);
    oneLine(refused, /^cadre: /);
    const bad = await run(['tenant', 'create', 'x', '--quota', 'disk=3'], admin);
    assert.equal(bad.status, 2);
    oneLine(bad, /^cadre: --quota "disk=3": expected <name>=<count\|none>/);
    const del = await run(['tenant', 'delete', id], admin);
    assert.equal(del.status, 0, del.stderr);
    const revoked = await run(['tenant', 'me'], { CADRE_API_KEY: k['key'] as string });
    assert.notEqual(revoked.status, 0, 'its keys are revoked');
  });

  it('keys and audit verify, and the server log written in the data directory', async () => {
    const list = await json(['keys', 'list']);
    assert.ok(Array.isArray(list));
    const created = await run(['keys', 'create', '--role', 'operator', '--label', 'cli-test', '--json'], { CADRE_API_KEY: KEY });
    assert.equal(created.status, 0, created.stderr);
    assert.match((JSON.parse(created.stdout) as Json)['key'] as string, /^cadre_/);
    const audit = await cadre(['audit', 'verify', '--json', '--data-dir', server.dataDir], env);
    assert.equal(audit.status, 0, audit.stderr);
    assert.equal((JSON.parse(audit.stdout) as Json)['ok'], true);
    const logs = await cadre(['logs', '--data-dir', server.dataDir, '-n', '200'], env);
    assert.equal(logs.status, 0, logs.stderr);
    assert.match(logs.stdout, /^\d{4}-\d\d-\d\dT[\d:.]+Z /m);
  });
});

describe('cadre CLI with no server: the embedded engine', function () {
  this.timeout(120_000);
  before(ensureBuilt);

  it('runs the README\'s first command end to end in this process: a review and a scan of the sample app, live, without a model or an approval', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'cadre-embedded-'));
    const conf = mkdtempSync(path.join(tmpdir(), 'cadre-embedded-conf-'));
    const e = { CADRE_API_KEY: '', CADRE_HOME: home, CADRE_CONFIG_DIR: conf, CADRE_PORT: '9', CADRE_URL: '' };
    const r = await cadre(['review', 'review src/server.js and src/orders.js', '--source', 'cli/sample-app', '--intelligence', 'ultra', '--watch'], e);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /^cadre: no server at http:\/\/127\.0\.0\.1:9; running the engine in this process on .+ \(embedded; cadre serve starts a server\)$/m);
    assert.match(r.stdout, /; agents: review-ai, security-ai$/m);
    assert.match(r.stdout, /^✔ review-ai completed/m);
    assert.match(r.stdout, /^✔ security-ai completed/m);
    assert.match(r.stdout, /^ {2}high {5}src\/orders\.js:7 {2}review\/eval: /m, 'the finding with its place');
    // The data directory is a real one: a second command reads the same execution from it.
    const id = /^(task_\w+)/m.exec(r.stdout)![1]!;
    const s = await cadre(['status', id, '--json'], e);
    assert.equal(s.status, 0, s.stderr);
    assert.equal((JSON.parse(s.stdout) as Json)['status'], 'completed');
    assert.ok(existsSync(path.join(home, 'store.json')) || existsSync(path.join(home, 'audit')), 'the embedded store is on disk');
  });
});
