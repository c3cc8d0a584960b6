import { strict as assert } from 'node:assert';
import { userInfo } from 'node:os';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { EngineEvent } from '../../../protocol/events';
import {
  AgentsRequest, ApprovalsRequest, CatalogRequest, DashboardRequest, DecideApprovalRequest, EngineEventNotification, ExecutionsRequest, InvokeAgentRequest,
  LlmCompleteRequest, ProposedChangesRequest, ReadinessRequest, ServerReadyNotification,
} from '../../../protocol/lsp';
import { ensureBuilt, ROOT, SERVER_JS, tempDir } from '../../support/server-process';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
}

/** A clean git workspace whose `main` is pushed to a local bare origin. */
function fixtureRepo(): string {
  const ws = tempDir('cadre-lsp-ws-');
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, 'config', 'user.email', 't@example.com');
  git(ws, 'config', 'user.name', 'T');
  git(ws, 'config', 'commit.gpgsign', 'false');
  writeFileSync(path.join(ws, 'index.js'), 'module.exports = (a, b) => a + b;\n');
  writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'fixture', version: '1.0.0', scripts: { test: 'node -e "console.log(1)"' } }, null, 2));
  writeFileSync(path.join(ws, '.gitignore'), 'node_modules\n');
  git(ws, 'add', '.');
  git(ws, 'commit', '-q', '-m', 'first');
  const origin = tempDir('cadre-lsp-origin-');
  git(origin, 'init', '-q', '--bare');
  git(ws, 'remote', 'add', 'origin', origin);
  git(ws, 'push', '-q', '-u', 'origin', 'main');
  return ws;
}

interface Lsp { child: ChildProcess; conn: MessageConnection; events: EngineEvent[]; exited: Promise<number | null>; ready: ServerReadyNotification.Params }

async function startLsp(dataDir: string, workspace: string, initializationOptions: Record<string, unknown> = {}, onLlm?: (p: LlmCompleteRequest.Params) => LlmCompleteRequest.Result): Promise<Lsp> {
  const child = spawn(process.execPath, [SERVER_JS, '--stdio', '--data-dir', dataDir, '--port', '0'], { cwd: ROOT, env: { ...process.env, CADRE_API_KEY: '' }, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const ready = new Promise<ServerReadyNotification.Params>((resolve) => conn.onNotification(ServerReadyNotification.method, resolve));
  const events: EngineEvent[] = [];
  conn.onNotification(EngineEventNotification.method, (e: EngineEvent) => void events.push(e));
  conn.onNotification('cadre/status', () => {});
  conn.onNotification('window/logMessage', () => {});
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', () => {});
  if (onLlm) conn.onRequest(LlmCompleteRequest.method, onLlm);
  conn.listen();
  const uri = pathToFileURL(workspace).href;
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: uri, workspaceFolders: [{ uri, name: 'ws' }], capabilities: {}, initializationOptions });
  await conn.sendNotification('initialized', {});
  return { child, conn, events, exited, ready: await ready };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string };
  }
  throw new Error('expected the request to fail');
}

describe('language server: the editor views over LSP', function () {
  this.timeout(120_000);
  let lsp: Lsp;
  let workspace: string;
  let dataDir: string;
  const others: ChildProcess[] = [];

  before(async () => {
    ensureBuilt();
    workspace = fixtureRepo();
    dataDir = tempDir();
    lsp = await startLsp(dataDir, workspace);
    assert.equal(lsp.ready.attached, false);
  });
  after(async () => {
    for (const c of others) if (c.exitCode === null) c.kill('SIGKILL');
    if (!lsp) return;
    try {
      await lsp.conn.sendRequest('shutdown');
      await lsp.conn.sendNotification('exit');
      assert.equal(await lsp.exited, 0);
    } finally {
      if (lsp.child.exitCode === null) lsp.child.kill('SIGKILL');
      lsp.conn.dispose();
    }
  });

  it('lists the 25 agents in 6 domains, the shared ones under BUILD and OPERATE with two roles', async () => {
    const r = (await lsp.conn.sendRequest(AgentsRequest.method, {})) as AgentsRequest.Result;
    assert.deepEqual(r.domains.map((d) => d.domain), ['BUILD', 'OPERATE', 'SECURE', 'GOVERN', 'OPTIMIZE', 'EVOLVE']);
    const ids = new Set(r.domains.flatMap((d) => d.agents.map((a) => a.id)));
    assert.equal(ids.size, 25);
    for (const shared of ['debug-ai', 'review-ai']) {
      const build = r.domains.find((d) => d.domain === 'BUILD')!.agents.find((a) => a.id === shared);
      const operate = r.domains.find((d) => d.domain === 'OPERATE')!.agents.find((a) => a.id === shared);
      assert.ok(build && operate, `${shared} in BUILD and OPERATE`);
      assert.notEqual(build.role, operate.role);
      assert.ok(build.role && operate.role);
    }
    const deploy = r.domains.find((d) => d.domain === 'OPERATE')!.agents.find((a) => a.id === 'deploy-ai')!;
    assert.ok(deploy.actions.includes('readiness'));
    assert.equal(deploy.acmfMode, 'LEARNING');
    assert.equal(r.intelligence, 'core');
  });

  it('the catalog lists 6 domain workflows and 9 templates', async () => {
    const r = (await lsp.conn.sendRequest(CatalogRequest.method, {})) as CatalogRequest.Result;
    assert.equal(r.workflows.filter((w) => w.kind === 'domain').length, 6);
    assert.equal(r.workflows.filter((w) => w.kind === 'template').length, 9);
  });

  let invoked = '';
  it('invoking an agent emits cadre/event notifications ending the execution, and Executions lists it with steps and phases', async () => {
    const r = (await lsp.conn.sendRequest(InvokeAgentRequest.method, { agentId: 'security-ai', action: 'secrets', input: {} })) as InvokeAgentRequest.Result;
    invoked = r.executionId;
    const end = await until('the end of the execution', () => lsp.events.find((e) => e.execution_id === invoked && (e.type === 'execution_completed' || e.type === 'execution_failed')));
    const mine = lsp.events.filter((e) => e.execution_id === invoked);
    assert.equal(mine.at(-1), end);
    assert.equal(end.type, 'execution_completed', JSON.stringify(end));
    for (const t of ['execution_started', 'phase_started', 'work_progress', 'phase_completed', 'gate_results']) assert.ok(mine.some((e) => e.type === t), t);
    const seqs = mine.map((e) => e.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'in order');

    const list = (await lsp.conn.sendRequest(ExecutionsRequest.method, { limit: 5 })) as ExecutionsRequest.Result;
    const row = list.find((x) => x.id === invoked)!;
    assert.ok(row, 'listed');
    assert.equal(row.kind, 'rigor');
    assert.equal(row.title, 'security-ai secrets');
    assert.equal(row.status, 'completed');
    assert.equal(row.progress, 100);
    assert.equal(row.steps.length, 1);
    assert.deepEqual(row.steps[0]!.phases.map((p) => `${p.phase}:${p.state}`), ['Research:completed', 'Inspect:completed', 'Generate:completed', 'Optimize:completed', 'Review:completed']);
    const one = (await lsp.conn.sendRequest(ExecutionsRequest.method, { id: invoked })) as ExecutionsRequest.Result;
    assert.equal(one[0]!.steps[0]!.gates.length, 21, 'the full gate table with an id');
  });

  it('an approval asked in LEARNING mode is listed and decided, recording who', async () => {
    // tester-ai's test run needs a person in LEARNING mode (the run_command approval, or the
    // "continue after failure" escalation when the step fails): every approval it asks for is denied.
    const command = ['node', '-e', "console.log('TAP version 13\\n1..1\\nok 1 - adds')"];
    const r = (await lsp.conn.sendRequest(InvokeAgentRequest.method, { agentId: 'tester-ai', action: 'test', input: { command } })) as InvokeAgentRequest.Result;
    const ended = () => lsp.events.find((e) => e.execution_id === r.executionId && (e.type === 'execution_completed' || e.type === 'execution_failed'));
    const decidedIds: string[] = [];
    await until('the end of the tester-ai run', async () => {
      if (ended()) return true;
      const list = (await lsp.conn.sendRequest(ApprovalsRequest.method, {})) as ApprovalsRequest.Result;
      for (const a of list.filter((x) => x.executionId === r.executionId)) {
        assert.equal(a.agentId, 'tester-ai');
        assert.ok(a.action && a.risk && a.requestedAt);
        const decided = (await lsp.conn.sendRequest(DecideApprovalRequest.method, { id: a.id, approved: false, by: 'user:dana', reason: 'not now' })) as DecideApprovalRequest.Result;
        // The editor's OS user is the principal; the client's `by` is a note in the audit trail.
        assert.deepEqual({ ...decided, decidedAt: typeof decided.decidedAt }, { id: a.id, approved: false, by: `editor:${userInfo().username}`, decidedAt: 'string' });
        decidedIds.push(a.id);
      }
      return undefined;
    });
    assert.ok(decidedIds.length >= 1, 'at least one approval was asked for and decided');
    const event = lsp.events.find((e) => e.execution_id === r.executionId && e.type === 'approval_decided');
    assert.equal(event && event.type === 'approval_decided' ? event.by : null, `editor:${userInfo().username}`);
    const again = await rejection(lsp.conn.sendRequest(DecideApprovalRequest.method, { id: decidedIds[0], approved: true, by: 'user:dana' }));
    assert.match(again.message, /pending|decided|denied/i);
    assert.equal(ended()!.type, 'execution_failed');
  });

  it('readiness runs deploy-ai on the fixture repository and returns the 7 checks', async () => {
    const r = (await lsp.conn.sendRequest(ReadinessRequest.method, {})) as ReadinessRequest.Result;
    assert.match(r.executionId, /^act_/);
    assert.deepEqual(r.checks.map((c) => c.id), ['clean-tree', 'branch-pushed', 'tests', 'coverage', 'critical-findings', 'review', 'approvals']);
    const by = Object.fromEntries(r.checks.map((c) => [c.id, c]));
    assert.equal(by['clean-tree']!.status, 'pass', by['clean-tree']!.evidence);
    assert.equal(by['branch-pushed']!.status, 'pass', by['branch-pushed']!.evidence);
    assert.equal(by['critical-findings']!.status, 'pass', by['critical-findings']!.evidence);
    assert.equal(by['approvals']!.status, 'pass', by['approvals']!.evidence);
    // The denied tester-ai run is the last test execution the door found.
    assert.equal(by['tests']!.status, 'fail', by['tests']!.evidence);
    assert.match(by['tests']!.evidence, /tester-ai test act_/);
    assert.equal(by['coverage']!.status, 'unknown');
    assert.equal(by['review']!.status, 'unknown');
    assert.equal(by['review']!.fix?.command, 'cadre.invokeAgent');
    assert.equal(r.ready, false);
  });

  it('the dashboard carries the run, its verified audit records, the week grid and the agents', async () => {
    const d = (await lsp.conn.sendRequest(DashboardRequest.method, { executionId: invoked })) as DashboardRequest.Result;
    assert.equal(d.execution?.id, invoked);
    assert.ok(d.audit.records.length >= 5, `${d.audit.records.length} records`);
    assert.ok(d.audit.records.every((x) => x.agentId === 'security-ai' && /^[0-9a-f]{64}$/.test(x.hash)));
    assert.equal(d.audit.verified.ok, true, d.audit.verified.detail);
    assert.equal(d.schedule.agents.length, 25);
    assert.ok(d.schedule.agents.every((a) => a.week.length === 7 && a.week.every((day) => day.length === 24)));
    assert.equal(d.agents.length, 25);
    assert.ok(d.agents.find((a) => a.id === 'security-ai')!.quality.length >= 1);
    const latest = (await lsp.conn.sendRequest(DashboardRequest.method, {})) as DashboardRequest.Result;
    assert.ok(latest.execution, 'the most recent execution without an id');
  });

  it('bad params answer InvalidParams with a readable message', async () => {
    const a = await rejection(lsp.conn.sendRequest(InvokeAgentRequest.method, { agentId: 5, action: 'x' }));
    assert.equal(a.code, -32602);
    assert.match(a.message, /agentId/);
    const b = await rejection(lsp.conn.sendRequest(ExecutionsRequest.method, { limit: 0 }));
    assert.equal(b.code, -32602);
    const c = await rejection(lsp.conn.sendRequest(DecideApprovalRequest.method, { id: 'appr_x', approved: 'yes' }));
    assert.equal(c.code, -32602);
    assert.match(c.message, /approved/);
    assert.match(c.message, /by/);
    const d = await rejection(lsp.conn.sendRequest(ExecutionsRequest.method, { id: 'act_000000000000000000000000' }));
    assert.equal(d.code, -32602);
    assert.match(d.message, /no execution/);
  });

  it('a server attached to the owner answers with an error naming the owner pid', async () => {
    const second = await startLsp(dataDir, workspace);
    others.push(second.child);
    assert.equal(second.ready.attached, true);
    const err = await rejection(second.conn.sendRequest(AgentsRequest.method, {}));
    assert.match(err.message, new RegExp(`pid ${lsp.ready.ownerPid}`));
    await second.conn.sendRequest('shutdown');
    await second.conn.sendNotification('exit');
    assert.equal(await second.exited, 0);
    second.conn.dispose();
  });

  it('Fix with coder-ai gets the document\'s fixable findings; its changes come back for the preview, the working tree untouched', async () => {
    // Last: it commits a file, which the readiness test above must not see.
    const text = 'function double(x) {\n  debugger;\n  return x * 2;\n}\nmodule.exports = { double };\n';
    writeFileSync(path.join(workspace, 'util.js'), text);
    git(workspace, 'add', 'util.js');
    git(workspace, 'commit', '-q', '-m', 'util');
    const uri = pathToFileURL(path.join(workspace, 'util.js')).href;
    await lsp.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'javascript', version: 1, text } });
    const zero = { line: 0, character: 0 };
    const r = (await lsp.conn.sendRequest('workspace/executeCommand', { command: 'cadre.fixSelection', arguments: [{ uri, range: { start: zero, end: zero } }] })) as { executionId: string };
    const ended = () => lsp.events.find((e) => e.execution_id === r.executionId && (e.type === 'execution_completed' || e.type === 'execution_failed'));
    await until('the end of the coder-ai run (its approvals granted)', async () => {
      if (ended()) return true;
      const list = (await lsp.conn.sendRequest(ApprovalsRequest.method, {})) as ApprovalsRequest.Result;
      for (const a of list.filter((x) => x.executionId === r.executionId)) {
        await lsp.conn.sendRequest(DecideApprovalRequest.method, { id: a.id, approved: true, by: 'user:dana' });
      }
      return undefined;
    });
    assert.equal(ended()!.type, 'execution_completed', JSON.stringify(ended()));
    // Approved, committed on a branch: every gate passes (the actions it reports are the ones it declared).
    const [row] = (await lsp.conn.sendRequest(ExecutionsRequest.method, { id: r.executionId })) as ExecutionsRequest.Result;
    assert.equal(row!.steps[0]!.status, 'completed', JSON.stringify(row!.steps[0]!.gates.filter((g) => g.status === 'fail')));
    const { changes } = (await lsp.conn.sendRequest(ProposedChangesRequest.method, { executionId: r.executionId })) as ProposedChangesRequest.Result;
    assert.equal(changes.length, 1);
    const [change] = changes;
    assert.equal(change!.agentId, 'coder-ai');
    assert.match(change!.diff, /^-  debugger;$/m);
    assert.deepEqual(change!.files.map((f) => f.path), ['util.js']);
    assert.equal(change!.files[0]!.beforeSha256, createHash('sha256').update(text).digest('hex'));
    assert.equal(change!.files[0]!.after, 'function double(x) {\n  return x * 2;\n}\nmodule.exports = { double };\n');
    if (change!.mode === 'branch') assert.match(git(workspace, 'show', `${change!.branch}:util.js`), /return x \* 2/);
    assert.equal(readFileSync(path.join(workspace, 'util.js'), 'utf8'), text, 'the working tree is written only by the editor when a person applies');
    const bad = await rejection(lsp.conn.sendRequest(ProposedChangesRequest.method, {}));
    assert.equal(bad.code, -32602);
  });

  it('tester-ai runs the test command once it is approved (its Research reaches its Generate in the worker)', async () => {
    const command = ['node', '-e', "console.log('TAP version 13\\n1..1\\nok 1 - adds')"];
    const r = (await lsp.conn.sendRequest(InvokeAgentRequest.method, { agentId: 'tester-ai', action: 'test', input: { command } })) as InvokeAgentRequest.Result;
    const ended = () => lsp.events.find((e) => e.execution_id === r.executionId && (e.type === 'execution_completed' || e.type === 'execution_failed'));
    await until('the end of the tester-ai run (approved)', async () => {
      if (ended()) return true;
      const list = (await lsp.conn.sendRequest(ApprovalsRequest.method, {})) as ApprovalsRequest.Result;
      for (const a of list.filter((x) => x.executionId === r.executionId)) await lsp.conn.sendRequest(DecideApprovalRequest.method, { id: a.id, approved: true, by: 'user:dana' });
      return undefined;
    });
    assert.equal(ended()!.type, 'execution_completed', JSON.stringify(ended()));
    const [row] = (await lsp.conn.sendRequest(ExecutionsRequest.method, { id: r.executionId })) as ExecutionsRequest.Result;
    assert.equal(row!.steps[0]!.status, 'completed', JSON.stringify(row));
  });

  it('with llm.provider editor, req-ai asks the client (cadre/llm.complete) and uses its answer', async () => {
    const asked: LlmCompleteRequest.Params[] = [];
    const stories = { stories: [{ role: 'admin', capability: 'export the audit log as CSV', benefit: 'auditors can review it', source: 'Admins can export the audit log as CSV so that auditors can review it.', acceptanceCriteria: [{ given: 'an admin on the audit page', when: 'they choose Export CSV', then: 'a CSV file is downloaded' }] }] };
    const second = await startLsp(tempDir(), workspace, { llm: { provider: 'editor' } }, (p) => {
      asked.push(p);
      return { text: JSON.stringify(stories), model: 'editor/test-family', usage: { promptTokens: 300, completionTokens: 80, totalTokens: 380 } };
    });
    others.push(second.child);
    try {
      const r = (await second.conn.sendRequest(InvokeAgentRequest.method, { agentId: 'req-ai', action: 'analyze', input: { prompt: 'Admins can export the audit log as CSV so that auditors can review it.' } })) as InvokeAgentRequest.Result;
      const ended = await until('the end of the req-ai run', () => second.events.find((e) => e.execution_id === r.executionId && (e.type === 'execution_completed' || e.type === 'execution_failed')));
      assert.equal(ended.type, 'execution_completed', JSON.stringify(ended));
      assert.equal(asked.length, 1, 'one completion asked of the editor');
      assert.ok(asked[0]!.messages.some((m) => /audit log/.test(m.content)), 'the requirement (Research evidence) is in the prompt');
    } finally {
      await second.conn.sendRequest('shutdown');
      await second.conn.sendNotification('exit');
      await second.exited;
      second.conn.dispose();
    }
  });
});
