/**
 * The MCP server of the server the EXTENSION started, in a real VS Code (code-server 1.100.3, see
 * README.md): an MCP client (the SDK's, in the test) lists Cadre's tools and runs a scan through it,
 * and the finding planted in the workspace comes back with its location; VS Code's own MCP server
 * list shows the server the extension registered (no configuration), and started from there it runs
 * (VS Code connects with the key the extension resolved).
 *
 * It runs in the VS Code session it shares with user-flows.e2e.test.ts (support/flows-session.ts): the
 * editor's process has CADRE_API_KEY (the extension's server adopts it as an admin key, as `cadre serve`
 * does) and a fixed port, so the client knows where and how to connect; config.js holds the planted key.
 * Skipped, with a line saying so, when the environment is not installed (test/e2e/setup.sh).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { flowsSession, type FlowsSession } from './support/flows-session';
import { ARTIFACTS, failureArtifacts, requireE2e, waitForApi, type Vsc } from './support/session';

describe('MCP through the server the extension started (e2e)', function () {
  this.timeout(240_000);
  let vsc: Vsc | null = null;
  let s: FlowsSession;

  before(async function () {
    requireE2e(this);
    s = await flowsSession();
    vsc = s.vsc;
  });
  failureArtifacts(() => vsc, 'mcp-');

  it('an MCP client lists the tools and runs a scan through the extension\'s server; the finding comes back with its location', async () => {
    const { url, key, ws } = s;
    const t0 = Date.now();
    await waitForApi(vsc!, url);
    const tApi = Date.now();
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const t of ['cadre_run_task', 'cadre_get_execution', 'cadre_decide_approval', 'cadre_readiness']) assert.ok(tools.includes(t), `${t} in ${tools.join(', ')}`);
      const progress: string[] = [];
      const r = (await client.callTool({ name: 'cadre_invoke_agent', arguments: { agentId: 'security-ai', action: 'secrets', prompt: 'scan for secrets' } }, undefined, {
        onprogress: (p) => void progress.push(p.message ?? ''), timeout: 120_000,
      })) as { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: { status: string; source: string; findings: Array<{ file: string; startLine: number; ruleId: string }> } };
      const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      assert.notEqual(r.isError, true, text);
      const s = r.structuredContent!;
      assert.equal(s.status, 'completed', text);
      assert.equal(s.source, ws, 'with no path the agents work on the editor\'s workspace folder');
      const f = s.findings.find((x) => x.file === 'config.js');
      assert.ok(f, text);
      assert.equal(f.startLine, 3);
      assert.match(text, /config\.js:3:\d+ \w+ aws-access-key-id/);
      assert.ok(progress.some((m) => /^security-ai: Review completed/.test(m)), `progress from the RIGOR phases: ${progress.join(' | ')}`);
    } finally {
      await client.close();
    }
    const tScan = Date.now();
    // The definition provider is registered (1.100 knows it under contributes.modelContextServerCollections):
    // VS Code's own MCP list shows the server the extension started, with no configuration.
    assert.doesNotMatch(vsc!.outputChannel('Cadre'), /not registered/);
    await vsc!.runCommand('MCP: List Servers');
    await vsc!.waitForText('Cadre', { scope: 'quickInput', timeoutMs: 30_000 });
    await vsc!.screenshot(path.join(ARTIFACTS, 'mcp-list-servers.png'));
    // Started from that list, VS Code connects with what the extension resolved (its own key): Running.
    // By keyboard: a hover of the list covers its rows for the mouse.
    await vsc!.page.keyboard.type('Cadre');
    await vsc!.press('Enter');
    await vsc!.page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Start Server' }).first().waitFor({ state: 'visible', timeout: 15_000 });
    await vsc!.page.keyboard.type('Start Server');
    await vsc!.press('Enter');
    const startedAt = Date.now();
    let polls = 0;
    await vsc!.waitUntil(async () => {
      polls += 1;
      await vsc!.runCommand('MCP: List Servers');
      const t = await vsc!.text('quickInput');
      await vsc!.press('Escape');
      return /Cadre\s*Running/.test(t) ? t : null;
    }, { timeoutMs: 60_000, what: 'VS Code to list the Cadre MCP server as Running' });
    const secs = (ms: number) => (ms / 1000).toFixed(1);
    console.log(`      (API ready ${secs(tApi - t0)} s, MCP client ${secs(tScan - tApi)} s, VS Code's list up to Start ${secs(startedAt - tScan)} s, listed as Running after ${secs(Date.now() - startedAt)} s and ${polls} look(s))`);
  });
});
