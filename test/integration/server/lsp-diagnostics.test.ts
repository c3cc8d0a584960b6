import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { ServerReadyNotification, type CadreDiagnosticData } from '../../../protocol/lsp';
import { ensureBuilt, ROOT, SERVER_JS, tempDir } from '../../support/server-process';

interface Pos { line: number; character: number }
interface Rng { start: Pos; end: Pos }
interface Diag { range: Rng; severity: number; source: string; code: string; codeDescription?: { href: string }; message: string; data?: CadreDiagnosticData }
interface PublishParams { uri: string; diagnostics: Diag[] }
interface Action { title: string; kind?: string; isPreferred?: boolean; edit?: { changes?: Record<string, Array<{ range: Rng; newText: string }>> }; command?: { command: string; arguments?: unknown[] } }
interface ProgressParams { token: string | number; value: { kind: 'begin' | 'report' | 'end'; title?: string; percentage?: number; message?: string } }

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
function plantedKey(): string {
  const alnum = 'ABCDEFGHJKLMNPQRSTUVWXYZ234567';
  let body = '';
  for (let i = 0; i < 16; i++) body += alnum[(i * 7 + 3) % alnum.length];
  return ['AK', 'IA', body].join('');
}

describe('language server diagnostics, code actions and commands over stdio', function () {
  this.timeout(60_000);
  before(ensureBuilt);

  it('publishes scanner findings, offers the quick fix and source actions, runs cadre.scanFile with progress, clears on change', async () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

    const dataDir = tempDir();
    const workspace = tempDir('cadre-ws-');
    const file = path.join(workspace, 'config.js');
    const uri = pathToFileURL(file).href;
    const text = `const key = "${plantedKey()}";\nmodule.exports = { key };\n`;
    writeFileSync(file, text);

    const child = spawn(process.execPath, [SERVER_JS, '--stdio', '--data-dir', dataDir, '--port', '0'], { cwd: ROOT, env: { ...process.env, CADRE_API_KEY: '' }, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    // A failing assertion must not leave the server running (it would keep mocha alive).
    cleanups.push(() => void (child.exitCode === null && child.kill('SIGKILL')));
    const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const ready = new Promise<ServerReadyNotification.Params>((resolve) => conn.onNotification(ServerReadyNotification.method, resolve));
    const logs: string[] = [];
    conn.onNotification('window/logMessage', (m: { message: string }) => void logs.push(m.message));
    conn.onNotification('cadre/status', () => {});

    const published: PublishParams[] = [];
    const publishWaiters: Array<() => void> = [];
    conn.onNotification('textDocument/publishDiagnostics', (p: PublishParams) => {
      if (p.uri !== uri) return;
      published.push(p);
      for (const w of publishWaiters.splice(0)) w();
    });
    const nextPublish = (pred: (p: PublishParams) => boolean, what: string) =>
      new Promise<PublishParams>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no publishDiagnostics ${what}; got ${JSON.stringify(published)}`)), 15_000);
        const check = () => {
          const hit = published.find(pred);
          if (hit) {
            clearTimeout(timer);
            resolve(hit);
          } else publishWaiters.push(check);
        };
        check();
      });

    const created: Array<string | number> = [];
    conn.onRequest('window/workDoneProgress/create', (p: { token: string | number }) => {
      created.push(p.token);
      return null;
    });
    const progress: ProgressParams[] = [];
    let progressEnded: () => void = () => {};
    const ended = new Promise<void>((r) => (progressEnded = r));
    conn.onNotification('$/progress', (p: ProgressParams) => {
      progress.push(p);
      if (p.value.kind === 'end') progressEnded();
    });
    conn.listen();

    const init = (await conn.sendRequest('initialize', {
      processId: process.pid, rootUri: pathToFileURL(workspace).href, workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'ws' }],
      capabilities: { window: { workDoneProgress: true }, textDocument: { publishDiagnostics: { versionSupport: true } } },
      initializationOptions: { diagnostics: 'onChange' },
    })) as { capabilities: { codeActionProvider?: unknown; executeCommandProvider?: { commands: string[] } } };
    assert.ok(init.capabilities.codeActionProvider);
    assert.ok(init.capabilities.executeCommandProvider?.commands.includes('cadre.scanFile'));
    await conn.sendNotification('initialized', {});
    await ready;

    // didOpen → a Cadre diagnostic on the planted key.
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'javascript', version: 1, text } });
    const first = await nextPublish((p) => p.diagnostics.length > 0, 'with a finding');
    const diag = first.diagnostics.find((d) => d.source === 'Cadre')!;
    assert.ok(diag, 'a Cadre diagnostic');
    assert.equal(diag.code, 'aws-access-key-id');
    assert.equal(diag.severity, 1); // critical → Error
    assert.equal(diag.codeDescription?.href, 'https://github.com/cadre/cadre/blob/main/docs/skills.md#aws-access-key-id');
    assert.deepEqual(diag.range, { start: { line: 0, character: 13 }, end: { line: 0, character: 33 } });
    assert.ok(!diag.message.includes(plantedKey()), 'the message never shows the secret');
    assert.equal(typeof diag.data?.fingerprint, 'string');
    assert.ok(diag.data?.fix, 'the scanner offers a fix for a quoted JS string');

    // codeAction → the preferred quick fix replacing the quoted key, plus the agent source actions.
    const actions = (await conn.sendRequest('textDocument/codeAction', {
      textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] },
    })) as Action[];
    const quick = actions.find((a) => a.kind === 'quickfix');
    assert.ok(quick, `a quick fix among ${JSON.stringify(actions.map((a) => a.title))}`);
    assert.equal(quick.isPreferred, true);
    const edits = quick.edit?.changes?.[uri];
    assert.deepEqual(edits, [{ range: { start: { line: 0, character: 12 }, end: { line: 0, character: 34 } }, newText: 'process.env.AWS_ACCESS_KEY_ID' }]);
    const commands = actions.filter((a) => a.command).map((a) => a.command!.command);
    assert.deepEqual(commands, ['cadre.scanFile', 'cadre.reviewSelection', 'cadre.fixSelection', 'cadre.explainSelection', 'cadre.generateTests']);
    assert.deepEqual(actions.find((a) => a.command?.command === 'cadre.scanFile')!.command!.arguments, [{ uri, range: diag.range }]);

    // cadre.scanFile → an execution id, and work-done progress begin … end on a token the server created.
    const result = (await conn.sendRequest('workspace/executeCommand', { command: 'cadre.scanFile', arguments: [{ uri, range: diag.range }] })) as { executionId: string };
    assert.match(result.executionId, /\S/);
    await ended;
    assert.equal(created.length, 1);
    const mine = progress.filter((p) => p.token === created[0]);
    assert.equal(mine[0]!.value.kind, 'begin');
    assert.equal(mine[mine.length - 1]!.value.kind, 'end');
    assert.ok(mine.some((p) => p.value.kind === 'report'), 'reports between begin and end');
    assert.ok(!logs.some((l) => l.startsWith(result.executionId)), `the scan did not fail: ${logs.join(' | ')}`);

    // Every source action reaches an agent with an embedded skill: tester-ai proposes test skeletons.
    const tests = (await conn.sendRequest('workspace/executeCommand', { command: 'cadre.generateTests', arguments: [{ uri, range: diag.range }] })) as { executionId: string };
    assert.match(tests.executionId, /^act_/);

    // didChange removing the secret (onChange mode) → diagnostics cleared after the debounce.
    const before = published.length;
    const line0 = text.split('\n')[0]!;
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: line0.length } }, text: 'const key = process.env.AWS_ACCESS_KEY_ID;' }],
    });
    await nextPublish((p) => published.indexOf(p) >= before && p.diagnostics.length === 0, 'clearing the finding');

    await conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    assert.equal(await exited, 0);
    conn.dispose();
  });
});
