/**
 * The core loop at the CLI, over a real server with the embedded skills: a task verb sends `verb`
 * and works on the current directory, `--watch` prints every step's outcome with its reason, a 422
 * at submission is one line, and `agents mode` changes a mode that the audit trail attributes to the key.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { auditRecordsUntil } from '../../support/audit-files';
import { ensureBuilt, ROOT, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { describeStep } from '../../../cli/src/watch';
import type { StepOutcome } from '../../../protocol/events';
import { api, KEY } from '../../support/fleet-server';

describe('cadre CLI: the core loop over a real server', function () {
  this.timeout(90_000);
  let server: ServerProcess & { url: string };
  let dataDir: string;
  let key: string;
  let keyId: string;
  let project: string;
  before(async () => {
    ensureBuilt();
    dataDir = tempDir();
    // No --workspace: a request without source has no workspace to fall back on (the 422 case).
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY });
    // An operator key: lowering a mode is open to every role (raising one needs an approver).
    const made = await api(server.url).post('/v1/admin/keys', { label: 'cli', plan: 'enterprise', role: 'operator' });
    assert.equal(made.status, 201, made.text);
    key = made.body['key'] as string;
    keyId = made.body['id'] as string;
    // A small project in a git repository, with a real finding for review-ai (eval of input).
    project = tempDir('cadre-cli-proj-');
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0' }));
    writeFileSync(path.join(project, 'index.ts'), 'export function add(a: number, b: number): number {\n  return a + b;\n}\n');
    writeFileSync(path.join(project, 'calc.ts'), 'export function calc(expr: string): number {\n  return eval(expr) as number;\n}\n');
    const git = (...a: string[]) => execFileSync('git', a, { cwd: project, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'add', '.');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
  });
  after(async () => stop(server));

  const cadre = (cwd: string, ...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), ...args, '--url', server.url], { cwd, env: { ...process.env, CADRE_API_KEY: key, CADRE_CONFIG_DIR: '/nonexistent-cadre-conf' }, encoding: 'utf8', timeout: 60_000 });

  it('runs a verb on the current directory and prints each step\'s outcome and reason with --watch', () => {
    const r = cadre(project, 'review', 'review', 'calc.ts', 'for', 'bugs', '--watch');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    // The first line names the folder the agents work on (the current directory, no --source given).
    assert.match(lines[0]!, new RegExp(`^task_\\w+ \\w+ on ${project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; agents: review-ai$`));
    assert.match(r.stdout, /^✔ review-ai completed \(confidence \d\.\d\d/m);
    assert.doesNotMatch(r.stdout, /^[✘!?–]/m);
    assert.ok(lines.includes('completed: 1 completed'), r.stdout);
    // Then what it found, with places.
    assert.match(r.stdout, /^result:\n {2}review-ai: /m);
  });

  it('words every outcome with its reason, a failure with its failed gates', () => {
    const state = { failedGates: new Map([['tester-ai', ['confidence (0.55 is below the required 0.6)']]]) };
    const step = (agent_id: string, outcome: StepOutcome, reason: string | null) => describeStep({ agent_id, outcome, reason, passed: outcome === 'completed', confidence: 0.9, duration_ms: 5 }, state);
    assert.equal(step('threathunter-ai', 'not_applicable', 'no log files'), '– threathunter-ai not applicable: no log files');
    assert.equal(step('debug-ai', 'needs_input', 'no trace given'), '? debug-ai needs input: no trace given');
    assert.equal(step('tester-ai', 'failed', 'Review failed 1 gate(s)'), '✘ tester-ai failed: confidence (0.55 is below the required 0.6)');
    assert.equal(step('coder-ai', 'error', 'timed out after 60 s'), '! coder-ai error: timed out after 60 s');
    assert.equal(step('review-ai', 'completed', null), '✔ review-ai completed (confidence 0.90, 5 ms)');
  });

  it('answers a refusal at submission (501: no model for coder-ai) in one line and exits 1', () => {
    const r = cadre(project, 'code', 'add', 'a', 'subtract', 'function');
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^cadre: code cannot run: coder-ai generate needs a language model and none is configured \(llm\.provider\)$/m);
  });

  it('names the field of a 400/422 problem in the same line', () => {
    const r = cadre(project, 'review', 'look', '--source', path.join(project, 'no-such-folder'));
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^cadre: source .*no-such-folder is not a folder on this machine \(body\.source: /);
  });

  it('lowers a mode with agents mode, and the audit trail records the key that did it', async () => {
    const r = cadre(project, 'agents', 'mode', 'debug-ai', 'observe', '--reason', 'too eager on this repo');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^debug-ai is OBSERVE \(from \w+, by key:\S+: too eager on this repo\)$/m);
    const s = cadre(project, 'agents', 'status', 'debug-ai');
    assert.equal(s.status, 0, s.stderr);
    assert.match(s.stdout, /^ {2}mode {8}OBSERVE$/m);
    assert.match(s.stdout, /^ {2}thresholds {2}as configured$/m);
    assert.match(s.stdout, /→ OBSERVE by key:\S+: too eager on this repo$/m);

    const isChange = (e: Record<string, unknown>): boolean => e['kind'] === 'acmf.mode_changed' && e['agentId'] === 'debug-ai' && (e['data'] as Record<string, unknown>)['to'] === 'OBSERVE';
    const audit = (await auditRecordsUntil(dataDir, 'the mode change', (all) => all.some(isChange)).catch(() => [])) as unknown as Array<Record<string, unknown>>;
    const change = audit.find((e) => e['kind'] === 'acmf.mode_changed' && e['agentId'] === 'debug-ai' && (e['data'] as Record<string, unknown>)['to'] === 'OBSERVE');
    assert.ok(change, 'the mode change is in the audit trail');
    assert.match(String(change['actor']), /^key:/);
    assert.equal(change['actor'], `key:${keyId}`);
    assert.equal((change['data'] as Record<string, unknown>)['reason'], 'too eager on this repo');
  });

  it('prints the 403 of raising a mode without the approver role in one line, exit 4', () => {
    const r = cadre(project, 'agents', 'mode', 'debug-ai', 'AUTONOMOUS', '--reason', 'trust it');
    assert.equal(r.status, 4, r.stdout);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^cadre: raising debug-ai from OBSERVE to AUTONOMOUS needs a key with the approver role/);
  });

  it('refuses an unknown mode before calling the server (a usage error, exit 2)', () => {
    const r = cadre(project, 'agents', 'mode', 'debug-ai', 'YOLO', '--reason', 'x');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^cadre: unknown ACMF mode "YOLO"/);
  });
});
