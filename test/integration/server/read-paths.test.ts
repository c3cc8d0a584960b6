/**
 * `security.read_paths` (folders outside the workspace that skills may read) is the user's to grant:
 * a repository's own .cadre.yaml that sets it is ignored with one logged line naming the file
 * (docs/configuration.md; issue 20, item 1: "a path the config allows").
 */
import { strict as assert } from 'node:assert';
import { ensureBuilt, stop, tempDir } from '../../support/server-process';
import { startFleetServer } from '../../support/fleet-server';

describe('security.read_paths from a workspace .cadre.yaml', function () {
  this.timeout(60_000);
  before(() => ensureBuilt());

  it('is ignored, and the server says so naming the file', async () => {
    const outside = tempDir('cadre-outside-');
    const server = await startFleetServer({ config: `security:\n  read_paths: [${JSON.stringify(outside)}]\n` });
    try {
      const lines = [...server.stdout, ...server.stderr];
      assert.ok(lines.some((l) => /security\.read_paths in .*\.cadre\.yaml ignored: only \$CADRE_HOME\/config\.yaml may allow reading outside the workspace/.test(l)), lines.join('\n'));
    } finally {
      await stop(server);
    }
  });
});
