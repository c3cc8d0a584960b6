import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { pathToFileURL } from 'node:url';
import { ServerReadyNotification } from '../../../protocol/lsp';
import { ensureBuilt, ROOT, SERVER_JS, tempDir } from '../../support/server-process';

describe('language server over stdio', function () {
  this.timeout(60_000);
  before(ensureBuilt);

  it('initializes, hosts the engine, reports its API in cadre/serverReady and shuts down cleanly', async () => {
    const dataDir = tempDir();
    const workspace = tempDir('cadre-ws-');
    const child = spawn(process.execPath, [SERVER_JS, '--stdio', '--data-dir', dataDir, '--port', '0'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const ready = new Promise<ServerReadyNotification.Params>((resolve) => conn.onNotification(ServerReadyNotification.method, resolve));
    conn.onNotification('window/logMessage', () => {});
    conn.listen();
    const init = (await conn.sendRequest('initialize', {
      processId: process.pid, rootUri: pathToFileURL(workspace).href, capabilities: {}, workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'ws' }],
    })) as { serverInfo: { name: string } };
    assert.equal(init.serverInfo.name, 'cadre');
    await conn.sendNotification('initialized', {});
    const params = await ready;
    assert.equal(params.attached, false);
    assert.equal(params.dataDir, dataDir);
    assert.match(params.newApiKey ?? '', /^cadre_/);
    const health = await fetch(`${params.url}/v1/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { pid: number }).pid, child.pid);
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    assert.equal(await exited, 0);
    conn.dispose();
  });
});
