import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import { createMessageConnection, type MessageConnection, type ResponseError } from 'vscode-jsonrpc/node';
import { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter, type Connection } from 'vscode-languageserver/node';
import { ClientRequests, ServerNotifications, ServerRequests, type ClientRequestHandlers } from '../../../protocol/lsp-messages';
import { runLanguageServer } from '../../../server/src/lsp/language-server';
import { registerViewRequests, viewHandlers, type RequestDeps } from '../../../server/src/lsp/requests';
import { WorkspaceFolders } from '../../../server/src/lsp/workspace-folders';

const declared = () => Object.values(ClientRequests).map((t) => t.method);

function deps(): RequestDeps {
  return { runtime: () => null, folders: new WorkspaceFolders(), log: () => {} };
}

/** The server's side of an in-memory LSP pipe, and the client's side of it. */
function pipe(): { server: Connection; client: MessageConnection; close(): void } {
  const up = new PassThrough();
  const down = new PassThrough();
  const server = createConnection(ProposedFeatures.all, new StreamMessageReader(up), new StreamMessageWriter(down));
  const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  client.onNotification(() => {});
  client.listen();
  return {
    server, client,
    close: () => {
      client.dispose();
      server.dispose();
      up.end();
      down.end();
    },
  };
}

describe('lsp: typed messages (protocol/lsp-messages.ts)', () => {
  it('declares each custom method once, all in the cadre/ namespace', () => {
    const all = [...declared(), ...Object.values(ServerRequests).map((t) => t.method), ...Object.values(ServerNotifications).map((t) => t.method)];
    assert.equal(new Set(all).size, all.length, `a method is declared twice: ${all.join(', ')}`);
    for (const m of all) assert.match(m, /^cadre\//);
    assert.ok(declared().length >= 15, declared().join(', '));
  });

  it('the request table registers exactly one handler per declared client request, and none other', () => {
    const registered: string[] = [];
    registerViewRequests({ onRequest: ((type: { method: string }) => void registered.push(type.method)) as never }, deps());
    assert.deepEqual([...registered].sort(), [...declared()].sort());
  });

  it('the whole language server registers a handler for every declared request and none without a declaration', async () => {
    const p = pipe();
    const custom: string[] = [];
    const onRequest = p.server.onRequest.bind(p.server);
    // Standard LSP handlers are installed through onInitialize, onCodeAction…; only custom ones go through onRequest.
    p.server.onRequest = ((type: string | { method: string }, ...rest: unknown[]) => {
      custom.push(typeof type === 'string' ? type : type.method);
      return (onRequest as (...a: unknown[]) => unknown)(type, ...rest);
    }) as Connection['onRequest'];
    try {
      runLanguageServer({ standalone: false, port: 0, dataDir: '/nonexistent-cadre-data', workspaceDir: undefined, skillModules: [] }, {}, p.server);
      assert.deepEqual([...custom].sort(), [...declared()].sort());
      // Over the wire: each declared method reaches its handler, which names it in its error (no engine runs: "still
      // starting" or the params it lacks), never "method not found".
      for (const type of Object.values(ClientRequests)) {
        const err = await p.client.sendRequest(type.method, {}).then(() => null, (e: ResponseError<unknown>) => e);
        if (type === ClientRequests.folders) assert.equal(err, null, `${type.method}: ${err?.message}`);
        else {
          assert.ok(err, `${type.method} answered without an engine`);
          assert.notEqual(err.code, -32601, `${type.method}: ${err.message}`);
          assert.ok(err.message.startsWith(`${type.method}: `), err.message);
        }
      }
      const unknown = await p.client.sendRequest('cadre/notDeclared', {}).then(() => null, (e: ResponseError<unknown>) => e);
      assert.equal(unknown?.code, -32601, 'an undeclared method is not handled');
    } finally {
      p.close();
    }
  });

  it('a handler table with an undeclared method, a missing one or a wrong type does not compile', () => {
    const good: ClientRequestHandlers = viewHandlers(deps());
    // @ts-expect-error an undeclared request name
    const extra: ClientRequestHandlers = { ...good, notDeclared: async () => ({}) };
    // @ts-expect-error the wrong result type (RunTaskRequest.Result is { executionId: string })
    const wrongResult: ClientRequestHandlers = { ...good, runTask: async () => ({ id: 42 }) };
    // @ts-expect-error the wrong params type (CancelExecutionRequest.Params is { executionId: string })
    const wrongParams: ClientRequestHandlers = { ...good, cancel: async (p: { id: number }) => ({ executionId: String(p.id), status: 'cancelled' as const }) };
    const missingOne: Omit<ClientRequestHandlers, 'folders'> = good;
    // @ts-expect-error a table without one of the declared handlers
    const incomplete: ClientRequestHandlers = missingOne;
    assert.ok(extra && wrongResult && wrongParams && incomplete);
  });
});
