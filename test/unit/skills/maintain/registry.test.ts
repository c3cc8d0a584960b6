import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchPackuments, parseRegistryFile } from '../../../../server/src/skills/maintain/index';

/** A local HTTP registry (real sockets, the npm URL scheme): the skill's fetch path without the internet. */
describe('maintain-ai registry metadata', () => {
  let server: Server;
  let base: string;
  const asked: Array<{ url: string; accept: string }> = [];

  before(async () => {
    server = createServer((req, res) => {
      asked.push({ url: req.url ?? '', accept: String(req.headers['accept'] ?? '') });
      const name = decodeURIComponent((req.url ?? '/').slice(1));
      if (name === 'left-pad' || name === '@scope/pkg') {
        res.writeHead(200, { 'content-type': 'application/vnd.npm.install-v1+json' });
        res.end(JSON.stringify({ name, 'dist-tags': { latest: '1.3.0' }, versions: { '1.2.0': {}, '1.3.0': { deprecated: 'use padStart' } } }));
      } else if (name === 'broken') {
        res.writeHead(500); res.end('oops');
      } else {
        res.writeHead(404); res.end('{"error":"Not found"}');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('fetches the abbreviated packuments (scoped names encoded as npm does) and lists the names the registry does not know', async () => {
    const r = await fetchPackuments(['left-pad', '@scope/pkg', 'no-such-package'], new AbortController().signal, base);
    assert.equal(r.failed, undefined);
    assert.deepEqual([...r.packuments.keys()].sort(), ['@scope/pkg', 'left-pad']);
    assert.equal(r.packuments.get('left-pad')!.versions.get('1.3.0')!.deprecated, 'use padStart');
    assert.deepEqual(r.missing, ['no-such-package']);
    assert.ok(asked.some((a) => a.url === '/@scope%2Fpkg'), JSON.stringify(asked));
    assert.ok(asked.every((a) => a.accept.startsWith('application/vnd.npm.install-v1+json')));
  });

  it('a server error or an unreachable registry is reported as a failure, never as an empty answer', async () => {
    const bad = await fetchPackuments(['broken'], new AbortController().signal, base);
    assert.match(bad.failed ?? '', /\/broken: HTTP 500$/);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const down = await fetchPackuments(['left-pad'], new AbortController().signal, `http://127.0.0.1:${port}/`);
    assert.match(down.failed ?? '', /fetch failed \(connect ECONNREFUSED/);
  });

  it('registry files: one packument, an array or a map; a bad one is named with its line', () => {
    const one = parseRegistryFile('r.json', '{"name": "a", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {"deprecated": ""}}}');
    assert.deepEqual([one[0]!.name, one[0]!.latest, one[0]!.versions.get('1.0.0')], ['a', '1.0.0', {}], 'an empty deprecated message is npm un-deprecating');
    assert.equal(parseRegistryFile('r.json', '[{"name": "a", "versions": {}}, {"name": "b", "versions": {}}]').length, 2);
    assert.throws(() => parseRegistryFile('r.json', '{\n "a": {\n  "name": "a",\n  "versions": 3\n }\n}'), /^ManifestError: r\.json:3: a: versions must be an object/);
    // V8 gives no position for this one ("Unexpected token '}' ... is not valid JSON"): the line comes from our own scan.
    assert.throws(() => parseRegistryFile('r.json', '{\n "a": [1,\n}'), /r\.json:3: not valid JSON/);
  });
});
