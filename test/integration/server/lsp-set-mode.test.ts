/**
 * "Cadre: Set Agent Mode…" over LSP (cadre/agents/setMode): the same engine call as REST
 * POST /v1/agents/{id}/acmf, with the editor's user as the principal in the audit trail; the Agents
 * view lists direct actions the engine cannot run as unavailable with the reason, and the
 * Executions view carries each step's outcome.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import * as path from 'node:path';
import { AgentsRequest, ExecutionsRequest, InvokeAgentRequest, SetAgentModeRequest } from '../../../protocol/lsp';
import { ensureBuilt, tempDir } from '../../support/server-process';
import { startLsp, type LspSession } from '../lsp/lsp-session';

async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string };
  }
  throw new Error('expected the request to fail');
}

describe('language server: set an agent\'s mode from the editor (cadre/agents/setMode)', function () {
  this.timeout(90_000);
  let lsp: LspSession;
  let dataDir: string;
  before(async () => {
    ensureBuilt();
    dataDir = tempDir();
    lsp = await startLsp({ folders: [tempDir('cadre-lsp-mode-ws-')], dataDir });
  });
  after(async () => {
    if (!lsp) return;
    await lsp.stop();
    lsp.conn.dispose();
  });

  const agent = async (id: string) => ((await lsp.conn.sendRequest(AgentsRequest.method, {})) as AgentsRequest.Result).domains.flatMap((d) => d.agents).find((a) => a.id === id)!;

  it('raises and lowers a mode, the audit trail naming the editor user with the reason, and the Agents view shows it', async () => {
    const before = (await agent('debug-ai')).acmfMode;
    const up = (await lsp.conn.sendRequest(SetAgentModeRequest.method, { agentId: 'debug-ai', mode: 'ASSISTED', reason: 'its fixes were right all week', by: 'user:dana' })) as SetAgentModeRequest.Result;
    const me = `editor:${userInfo().username}`;
    assert.deepEqual(up, { agentId: 'debug-ai', from: before, mode: 'ASSISTED', by: me });
    assert.equal((await agent('debug-ai')).acmfMode, 'ASSISTED');
    const down = (await lsp.conn.sendRequest(SetAgentModeRequest.method, { agentId: 'debug-ai', mode: 'OBSERVE', reason: 'pausing during the release' })) as SetAgentModeRequest.Result;
    assert.deepEqual(down, { agentId: 'debug-ai', from: 'ASSISTED', mode: 'OBSERVE', by: me });

    // The day files follow the store's journal (where the records are durable) asynchronously: read until both are there.
    const readChanges = () => readdirSync(path.join(dataDir, 'audit')).filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => readFileSync(path.join(dataDir, 'audit', f), 'utf8').trim().split('\n')).filter(Boolean).map((l) => JSON.parse(l) as { kind: string; agentId?: string; actor: string; data: Record<string, unknown> })
      .filter((e) => e.kind === 'acmf.mode_changed' && e.agentId === 'debug-ai' && e.data['initial'] !== true);
    let changes = readChanges();
    for (const end = Date.now() + 10_000; changes.length < 2 && Date.now() < end;) {
      await new Promise((res) => setTimeout(res, 100));
      changes = readChanges();
    }
    assert.deepEqual(changes.map((e) => [e.actor, e.data['to'], e.data['reason']]), [[me, 'ASSISTED', 'its fixes were right all week'], [me, 'OBSERVE', 'pausing during the release']]);
    assert.equal(changes[0]!.data['note'], 'user:dana', 'what the client says about who it is stays a note');
  });

  it('refuses a missing reason, an unknown mode and an unknown agent with InvalidParams', async () => {
    const noReason = await rejection(lsp.conn.sendRequest(SetAgentModeRequest.method, { agentId: 'debug-ai', mode: 'LEARNING', reason: ' ' }));
    assert.equal(noReason.code, -32602);
    assert.match(noReason.message, /cadre\/agents\/setMode: invalid params: reason: say why the mode changes/);
    const badMode = await rejection(lsp.conn.sendRequest(SetAgentModeRequest.method, { agentId: 'debug-ai', mode: 'YOLO', reason: 'x' }));
    assert.match(badMode.message, /invalid params: mode:/);
    const noAgent = await rejection(lsp.conn.sendRequest(SetAgentModeRequest.method, { agentId: 'nobody-ai', mode: 'OBSERVE', reason: 'x' }));
    assert.match(noAgent.message, /unknown agent "nobody-ai"/);
  });

  it('lists direct actions the engine cannot run as unavailable, with the reason', async () => {
    const coder = await agent('coder-ai');
    assert.ok(!coder.actions.includes('generate'));
    assert.match(coder.unavailable!.find((u) => u.action === 'generate')!.reason, /needs a language model/);
    // An [ULTRA] action at the core tier is unavailable with the tier as its reason.
    const govern = await agent('govern-ai');
    assert.match(govern.unavailable!.find((u) => u.action === 'audit-trail')!.reason, /\[ULTRA\] action, above the core intelligence tier/);
    const review = await agent('review-ai');
    assert.ok(review.actions.includes('review'));
    assert.ok(!review.unavailable!.some((u) => u.action === 'review'));
  });

  it('the Executions view carries each step\'s outcome', async () => {
    const r = (await lsp.conn.sendRequest(InvokeAgentRequest.method, { agentId: 'security-ai', action: 'secrets', input: {} })) as InvokeAgentRequest.Result;
    const end = Date.now() + 30_000;
    while (!lsp.events().some((e) => e.execution_id === r.executionId && (e.type === 'execution_completed' || e.type === 'execution_failed'))) {
      if (Date.now() > end) throw new Error('the execution did not end');
      await new Promise((res) => setTimeout(res, 50));
    }
    const [row] = (await lsp.conn.sendRequest(ExecutionsRequest.method, { id: r.executionId })) as ExecutionsRequest.Result;
    const completed = lsp.events().find((e) => e.execution_id === r.executionId && e.type === 'step_completed');
    assert.ok(completed && completed.type === 'step_completed');
    assert.equal(row!.steps[0]!.outcome, completed.outcome);
    assert.equal(row!.steps[0]!.reason, completed.reason);
    assert.ok(row!.steps[0]!.outcome, 'an ended step has an outcome');
  });
});
