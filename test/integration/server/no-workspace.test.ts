/**
 * Where a request without `source` works (docs/decisions.md, "The core loop"): a standalone server
 * defaults to the directory it was started in, `--no-workspace` serves without one, and then a verb
 * whose agents need a workspace is refused at submission with 422 ERR_NEEDS_INPUT naming `source`.
 */
import { strict as assert } from 'node:assert';
import { parseServerArgs, UsageError } from '../../../server/src/host/options';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { api, KEY } from '../../support/fleet-server';

describe('a standalone server with and without a default workspace', function () {
  this.timeout(60_000);

  it('parses: the current directory by default, none with --no-workspace, both flags together are a usage error', () => {
    assert.equal(parseServerArgs(['--standalone'], {}).workspaceDir, process.cwd());
    assert.equal(parseServerArgs(['--standalone', '--no-workspace'], {}).workspaceDir, undefined);
    assert.throws(() => parseServerArgs(['--standalone', '--no-workspace', '--workspace', '/tmp'], {}), UsageError);
  });

  describe('over HTTP with --no-workspace', () => {
    let server: ServerProcess & { url: string };
    before(async () => {
      ensureBuilt();
      server = await startStandalone(tempDir(), { CADRE_API_KEY: KEY }, ['--no-workspace']);
    });
    after(async () => server && stop(server));

    it('a review without source is 422 ERR_NEEDS_INPUT naming source, and no execution is created', async () => {
      const c = api(server.url);
      const r = await c.post('/v1/agents/tasks', { capabilities: ['BUILD'], verb: 'review', task: 'review src/index.ts' });
      assert.equal(r.status, 422, r.text);
      assert.match(String(r.headers['content-type']), /application\/problem\+json/);
      assert.equal(r.body['code'], 'ERR_NEEDS_INPUT');
      assert.deepEqual((r.body['errors'] as Array<{ field: string }> | undefined)?.map((e) => e.field), ['body.source'], r.text);
      const store = await c.get('/v1/admin/store');
      const executions = (store.body['collections'] as Array<{ name: string; count: number }>).find((x) => x.name === 'executions');
      assert.equal(executions?.count ?? 0, 0, store.text);
    });
  });
});
