/**
 * The language server in a multi-root workspace and with settings changed while it runs, over the
 * real built server (dist/server.js --stdio) and the typed declarations of protocol/lsp-messages.ts.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClientRequests } from '../../../protocol/lsp-messages';
import { ensureBuilt, tempDir } from '../../support/server-process';
import { folderRef, startLsp as startSession, until, type LspSession } from '../lsp/lsp-session';

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
const plantedKey = () => ['AK', 'IA', 'QWERTYUIOPASDFGH'].join('');

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
}

/** A folder with `src/config.js` holding a planted key; `repo`: committed in its own git repository. */
function folder(name: string, repo: boolean): string {
  const dir = path.join(tempDir('cadre-mr-'), name);
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  writeFileSync(path.join(dir, 'src', 'config.js'), `const key = "${plantedKey()}";\nmodule.exports = { key };\n`);
  writeFileSync(path.join(dir, 'src', 'math.ts'), 'export function add(a: number, b: number): number {\n  console.log("adding", a, b);\n  return a + b;\n}\n');
  if (repo) {
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'init');
  }
  return dir;
}

const startLsp = (folders: string[], initializationOptions: object = {}) => startSession({ folders, initializationOptions });
const stop = (lsp: LspSession | undefined) => lsp?.stop();

describe('language server: multi-root workspaces and live settings', function () {
  this.timeout(120_000);
  before(ensureBuilt);

  describe('every workspace folder is served', () => {
    let lsp: LspSession | undefined;
    after(() => stop(lsp));

    it('publishes findings on files of both folders, each named relative to its own folder', async () => {
      const a = folder('alpha', true);
      const b = folder('beta', false);
      lsp = await startLsp([a, b]);
      const folders = await lsp.conn.sendRequest(ClientRequests.folders, {});
      assert.deepEqual(folders.folders.map((f) => f.name), ['alpha', 'beta']);
      for (const dir of [a, b]) {
        const uri = pathToFileURL(path.join(dir, 'src', 'config.js')).href;
        await lsp.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'javascript', version: 1, text: `const key = "${plantedKey()}";\nmodule.exports = { key };\n` } });
      }
      for (const dir of [a, b]) {
        const uri = pathToFileURL(path.join(dir, 'src', 'config.js')).href;
        const p = await until(`diagnostics on ${uri}`, () => lsp!.published.find((x) => x.uri === uri && x.diagnostics.length > 0));
        const secret = p.diagnostics.find((d) => d.code === 'aws-access-key-id');
        assert.ok(secret, JSON.stringify(p));
        // The fix's edit names the file relative to the folder that holds it (not to the first folder).
        const files = secret.data?.fix?.edits.map((e) => e.file) ?? [];
        assert.ok(files.length > 0 && files.every((f) => f === 'src/config.js'), JSON.stringify(files));
      }
    });

    it('readiness checks the folder it is asked about: the repository is clean, the folder without git is not', async () => {
      const [alpha, beta] = (await lsp!.conn.sendRequest(ClientRequests.folders, {})).folders;
      const ra = await lsp!.conn.sendRequest(ClientRequests.readiness, { folder: alpha!.uri });
      const rb = await lsp!.conn.sendRequest(ClientRequests.readiness, { folder: beta!.uri });
      assert.equal(ra.folder?.name, 'alpha');
      assert.equal(rb.folder?.name, 'beta');
      const clean = (r: typeof ra) => r.checks.find((c) => c.id === 'clean-tree');
      assert.equal(clean(ra)?.status, 'pass', JSON.stringify(clean(ra)));
      assert.notEqual(clean(rb)?.status, 'pass', JSON.stringify(clean(rb)));
      const wrong = await lsp!.conn.sendRequest(ClientRequests.readiness, { folder: pathToFileURL(tempDir()).href }).then(() => null, (e: { code: number; message: string }) => e);
      assert.equal(wrong?.code, -32602, 'a folder the editor does not have is invalid params');
    });

    it('follows folders added and removed at runtime (workspace/didChangeWorkspaceFolders)', async () => {
      const gamma = folder('gamma', false);
      const [alpha, beta] = (await lsp!.conn.sendRequest(ClientRequests.folders, {})).folders;
      await lsp!.conn.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: [folderRef(gamma)], removed: [{ uri: beta!.uri, name: beta!.name }] } });
      const names = await until('gamma served, beta gone', async () => {
        const now = (await lsp!.conn.sendRequest(ClientRequests.folders, {})).folders.map((f) => f.name);
        return now.includes('gamma') && !now.includes('beta') ? now : null;
      });
      assert.deepEqual(names, [alpha!.name, 'gamma']);
      const uri = pathToFileURL(path.join(gamma, 'src', 'config.js')).href;
      await lsp!.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'javascript', version: 1, text: `const key = "${plantedKey()}";\n` } });
      const p = await until('diagnostics in the added folder', () => lsp!.published.find((x) => x.uri === uri && x.diagnostics.length > 0));
      assert.ok(p.diagnostics.some((d) => d.data?.fix?.edits.every((e) => e.file === 'src/config.js')), JSON.stringify(p));
    });
  });

  describe('settings applied without a restart', () => {
    let lsp: LspSession | undefined;
    after(() => stop(lsp));

    it('a tier and language-model change while an execution runs: the execution completes, later requests see the new settings, same process', async () => {
      const ws = folder('delta', true);
      lsp = await startLsp([ws], { intelligence: 'core', diagnostics: 'onSave' });
      assert.equal((await lsp.conn.sendRequest(ClientRequests.agents, {})).intelligence, 'core');
      const pid = lsp.child.pid;
      const { executionId } = await lsp.conn.sendRequest(ClientRequests.invokeAgent, { agentId: 'review-ai', action: 'review', input: { files: ['src/math.ts'] } });
      const [before] = await lsp.conn.sendRequest(ClientRequests.executions, { id: executionId });
      assert.ok(before && ['queued', 'running'].includes(before.status), `the execution is still running when the settings change (${before?.status})`);
      await lsp.conn.sendNotification('workspace/didChangeConfiguration', {
        settings: { cadre: { diagnostics: 'onSave', intelligence: 'ultra', llm: { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'test-model' } } },
      });
      await until('the settings applied', () => lsp!.logs.find((l) => /^settings applied: intelligence ultra, language model openai-compatible/.test(l)));
      assert.equal((await lsp.conn.sendRequest(ClientRequests.agents, {})).intelligence, 'ultra');
      const end = await until('the execution to end', () => lsp!.events().find((e) => e.execution_id === executionId && (e.type === 'execution_completed' || e.type === 'execution_failed')), 90_000);
      const [after] = await lsp.conn.sendRequest(ClientRequests.executions, { id: executionId });
      assert.equal(after?.status, 'completed', `${end.type}: ${JSON.stringify(after?.error)}`);
      assert.equal(lsp.child.pid, pid);
      assert.equal(lsp.child.exitCode, null, 'the server was not restarted');
      assert.ok(!lsp.logs.some((l) => /resumed \d+ execution/.test(l)), 'nothing was resumed');
      // Back to no model: applied too.
      await lsp.conn.sendNotification('workspace/didChangeConfiguration', { settings: { cadre: { intelligence: 'pro' } } });
      await until('the second change', () => lsp!.logs.find((l) => /^settings applied: intelligence pro, language model none/.test(l)));
    });

    it('settings that do not have the declared shape are refused with a log line and change nothing', async () => {
      await lsp!.conn.sendNotification('workspace/didChangeConfiguration', { settings: { cadre: { intelligence: 'mega' } } });
      await until('the refusal', () => lsp!.logs.find((l) => /^settings ignored: intelligence/.test(l)));
      assert.equal((await lsp!.conn.sendRequest(ClientRequests.agents, {})).intelligence, 'pro');
    });

    it('a tier the editor no longer sets (the setting removed) returns to the configured tier, not the last one sent', async () => {
      // The extension sends no `intelligence` when the setting has no explicit value (client/src/extension.ts explicitTier).
      await lsp!.conn.sendNotification('workspace/didChangeConfiguration', { settings: { cadre: { diagnostics: 'onSave' } } });
      await until('the unset tier applied', () => lsp!.logs.find((l) => /^settings applied: intelligence core, language model none/.test(l)));
      assert.equal((await lsp!.conn.sendRequest(ClientRequests.agents, {})).intelligence, 'core');
    });
  });
});
