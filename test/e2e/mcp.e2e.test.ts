/**
 * The MCP server of the server the EXTENSION started, in a real VS Code (code-server 1.100.3, see
 * README.md): an MCP client (the SDK's, in the test) lists Cadre's tools and runs a scan through it,
 * and the finding planted in the workspace comes back with its location; VS Code's own MCP server
 * list shows the server the extension registered (no configuration), and started from there it runs
 * (VS Code connects with the key the extension resolved).
 *
 * The test gives the editor's process CADRE_API_KEY (the extension's server adopts it as an admin
 * key, as `cadre serve` does) and a fixed port, so the client knows where and how to connect.
 * Skipped, with a line saying so, when the environment is not installed (test/e2e/setup.sh).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { KEY } from '../support/fleet-server';
import { ensureBuilt, ROOT } from '../support/server-process';

const E2E_HOME = process.env['VSCODE_E2E_HOME'] ?? path.join(homedir(), '.cache', 'vscode-e2e');
const ARTIFACTS = path.join(ROOT, 'test', 'e2e', 'artifacts');

interface Locator { first(): Locator; waitFor(o: object): Promise<void> }
interface Vsc {
  page: { locator(sel: string, o?: object): Locator; keyboard: { type(t: string): Promise<void> } };
  text(scope?: string): Promise<string>;
  press(keys: string): Promise<void>;
  waitUntil<T>(fn: () => Promise<T | null | false | undefined>, o: { timeoutMs: number; what: string }): Promise<T>;
  statusBarItems(): Promise<Array<{ id: string; text: string; label: string }>>;
  screenshot(file: string): Promise<void>;
  outputChannel(name: string): string;
  runCommand(title: string, o?: { timeoutMs: number }): Promise<void>;
  waitForText(text: string | RegExp, o: { timeoutMs: number; scope?: string }): Promise<string>;
  dumpDiagnostics(dir: string): string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function workspace(): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'cadre-e2e-mcp-'));
  // A planted AWS key id (built at run time so that this file holds none).
  writeFileSync(path.join(ws, 'config.js'), `module.exports = {\n  region: 'eu-west-1',\n  key: "${'AK' + 'IA'}QWERTYUIOPASDFGH",\n};\n`);
  const env = { ...process.env, GIT_AUTHOR_NAME: 'e2e', GIT_AUTHOR_EMAIL: 'e2e@example.com', GIT_COMMITTER_NAME: 'e2e', GIT_COMMITTER_EMAIL: 'e2e@example.com' };
  for (const args of [['init', '-q', '-b', 'main'], ['add', '.'], ['commit', '-q', '-m', 'fixture']]) execFileSync('git', args, { cwd: ws, stdio: 'ignore', env });
  return ws;
}

describe('MCP through the server the extension started (e2e)', function () {
  this.timeout(240_000);
  let vsc: Vsc | null = null;
  let ws = '';
  let port = 0;
  const savedKey = process.env['CADRE_API_KEY'];

  before(async function () {
    if (!existsSync(path.join(E2E_HOME, 'env.json'))) {
      const line = `e2e skipped: the real-VS-Code environment is not installed (bash test/e2e/setup.sh installs it into ${E2E_HOME})`;
      if (process.env['CADRE_E2E_REQUIRED'] === '1') throw new Error(line.replace('skipped', 'required but'));
      console.log(`      ${line}`);
      this.skip();
    }
    ensureBuilt();
    mkdirSync(ARTIFACTS, { recursive: true });
    ws = workspace();
    port = await freePort();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cadre-e2e-mcp-data-'));
    // The harness hands this process's environment to the editor, and the extension to its server.
    process.env['CADRE_API_KEY'] = KEY;
    const harness = (await import(pathToFileURL(path.join(__dirname, 'harness.mjs')).href)) as { launch(o: object): Promise<Vsc> };
    vsc = await harness.launch({ extensionPath: ROOT, installMode: 'link', workspacePath: ws, settings: { 'cadre.server.port': port, 'cadre.server.dataDir': dataDir } });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && vsc) {
      await vsc.screenshot(path.join(ARTIFACTS, 'FAILED-mcp.png')).catch(() => {});
      await Promise.resolve().then(() => writeFileSync(path.join(ARTIFACTS, 'FAILED-mcp-cadre-output.txt'), vsc!.outputChannel('Cadre'))).catch(() => {});
      await Promise.resolve().then(() => void vsc!.dumpDiagnostics(path.join(ARTIFACTS, 'FAILED-mcp-logs'))).catch(() => {});
    }
  });
  after(async () => {
    if (savedKey === undefined) delete process.env['CADRE_API_KEY'];
    else process.env['CADRE_API_KEY'] = savedKey;
    await vsc?.close();
  });

  it('an MCP client lists the tools and runs a scan through the extension\'s server; the finding comes back with its location', async () => {
    const url = `http://127.0.0.1:${port}`;
    await vsc!.waitUntil(async () => (await vsc!.statusBarItems()).some((t) => t.text.includes(url)), { timeoutMs: 120_000, what: `the Cadre status item to show ${url}` });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
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
    await vsc!.waitUntil(async () => {
      await vsc!.runCommand('MCP: List Servers');
      const t = await vsc!.text('quickInput');
      await vsc!.press('Escape');
      return /Cadre\s*Running/.test(t) ? t : null;
    }, { timeoutMs: 60_000, what: 'VS Code to list the Cadre MCP server as Running' });
  });
});
