import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { ServerReadyNotification } from '../../../protocol/lsp';
import { ensureBuilt, ROOT, SERVER_JS, tempDir } from '../../support/server-process';

interface PublishParams { uri: string; version?: number; diagnostics: Array<{ source: string; code: string }> }

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
const plantedKey = () => ['AK', 'IA', 'QWERTYUIOPASDFGH'].join('');

describe('language server: settings applied without a restart (workspace/didChangeConfiguration)', function () {
  this.timeout(60_000);
  before(ensureBuilt);

  it('switches the diagnostics mode from onSave to onChange in the running server: an edit is then scanned as typed', async () => {
    const workspace = tempDir('cadre-ws-');
    const file = path.join(workspace, 'config.js');
    const uri = pathToFileURL(file).href;
    writeFileSync(file, 'module.exports = {};\n');
    const child = spawn(process.execPath, [SERVER_JS, '--stdio', '--data-dir', tempDir(), '--port', '0'], { cwd: ROOT, env: { ...process.env, CADRE_API_KEY: '' }, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
      const ready = new Promise<ServerReadyNotification.Params>((resolve) => conn.onNotification(ServerReadyNotification.method, resolve));
      const logs: string[] = [];
      conn.onNotification('window/logMessage', (m: { message: string }) => void logs.push(m.message));
      conn.onNotification('cadre/status', () => {});
      const published: PublishParams[] = [];
      const waiters: Array<() => void> = [];
      conn.onNotification('textDocument/publishDiagnostics', (p: PublishParams) => {
        if (p.uri !== uri) return;
        published.push(p);
        for (const w of waiters.splice(0)) w();
      });
      const nextPublish = (pred: (p: PublishParams) => boolean, what: string) => new Promise<PublishParams>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no publishDiagnostics ${what}; got ${JSON.stringify(published)}`)), 15_000);
        const check = () => {
          const hit = published.find(pred);
          if (hit) (clearTimeout(timer), resolve(hit));
          else waiters.push(check);
        };
        check();
      });
      conn.listen();
      await conn.sendRequest('initialize', {
        processId: process.pid, rootUri: pathToFileURL(workspace).href, workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'ws' }],
        capabilities: { textDocument: { publishDiagnostics: { versionSupport: true } } },
        initializationOptions: { diagnostics: 'onSave' },
      });
      await conn.sendNotification('initialized', {});
      const info = await ready;

      await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'javascript', version: 1, text: 'module.exports = {};\n' } });
      await nextPublish((p) => p.version === 1, 'for the opened document');
      // onSave: an edit is not scanned while typing.
      await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ text: `const key = "${plantedKey()}";\n` }] });

      await conn.sendNotification('workspace/didChangeConfiguration', { settings: { cadre: { diagnostics: 'onChange' } } });
      await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 3 }, contentChanges: [{ text: `const key = "${plantedKey()}";\nmodule.exports = { key };\n` }] });
      const scanned = await nextPublish((p) => p.version === 3, 'for the edit made after the switch to onChange');
      assert.ok(scanned.diagnostics.some((d) => d.source === 'Cadre' && d.code === 'aws-access-key-id'), JSON.stringify(scanned));
      assert.equal(published.filter((p) => p.version === 2).length, 0, 'the edit made in onSave mode was not scanned');
      assert.ok(logs.some((l) => l === 'diagnostics mode: onChange'), logs.join('\n'));
      // The same server process answered throughout: nothing restarted.
      assert.equal(child.exitCode, null);
      assert.ok(info.url.startsWith('http://127.0.0.1:'));
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
