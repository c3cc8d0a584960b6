import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { mcpSnippets } from '../../../cli/src/mcp-command';
import { ensureBuilt, ROOT } from '../../support/server-process';

const CLI = path.join(ROOT, 'dist', 'cli.js');

function cadre(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, CADRE_API_KEY: '', CADRE_URL: '', CADRE_PORT: '', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('cadre mcp: configuration snippets for other MCP clients', function () {
  this.timeout(30_000);
  before(() => ensureBuilt());

  it('prints the four clients with the /mcp endpoint of --url and the key by reference, never in clear', () => {
    const r = cadre(['--url', 'http://127.0.0.1:7461/', 'mcp'], { CADRE_API_KEY: 'cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e98' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /claude mcp add --transport http cadre http:\/\/127\.0\.0\.1:7461\/mcp --header "Authorization: Bearer \$CADRE_API_KEY"/);
    assert.match(r.stdout, /\[mcp_servers\.cadre\]\nurl = "http:\/\/127\.0\.0\.1:7461\/mcp"\nbearer_token_env_var = "CADRE_API_KEY"/);
    assert.match(r.stdout, /"type": "streamableHttp"/);
    assert.match(r.stdout, /"Authorization": "Bearer \$\{input:cadre-api-key\}"/);
    assert.doesNotMatch(r.stdout, /cadre_LqDip6/, 'the key is not printed without --show-key');
  });

  it('--client prints that snippet alone (JSON that parses), --show-key the key of CADRE_API_KEY', () => {
    const r = cadre(['mcp', '--client', 'cline', '--show-key'], { CADRE_API_KEY: 'cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e98' });
    assert.equal(r.code, 0, r.stderr);
    const cfg = JSON.parse(r.stdout) as { mcpServers: { cadre: { url: string; headers: Record<string, string> } } };
    assert.equal(cfg.mcpServers.cadre.url, 'http://127.0.0.1:7450/mcp');
    assert.equal(cfg.mcpServers.cadre.headers['Authorization'], 'Bearer cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e98');
    const vs = JSON.parse(cadre(['mcp', '--client', 'vscode', '--no-auth']).stdout) as { servers: { cadre: { type: string; headers?: unknown } }; inputs?: unknown };
    assert.equal(vs.servers.cadre.type, 'http');
    assert.equal(vs.servers.cadre.headers, undefined, '--no-auth: no header');
    assert.equal(vs.inputs, undefined);
  });

  it('refuses an unknown client, --show-key without a key and a URL that is not one, in one line with a non-zero exit', () => {
    for (const [args, re] of [
      [['mcp', '--client', 'emacs'], /^cadre: unknown client "emacs" \(one of claude-code, codex, cline, vscode\)\n$/],
      [['mcp', '--show-key'], /^cadre: --show-key prints the key of CADRE_API_KEY, which is not set\n$/],
      [['--url', 'ftp://x', 'mcp'], /^cadre: "ftp:\/\/x" is not an http\(s\) URL\n$/],
    ] as const) {
      const r = cadre([...args]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, re);
      assert.equal(r.stdout, '');
    }
  });

  it('mcpSnippets keeps a path prefix of the URL and names the server as asked', () => {
    const s = mcpSnippets({ url: 'https://cadre.internal/base/', name: 'cadre-team' });
    assert.match(s.find((x) => x.client === 'codex')!.text, /^\[mcp_servers\.cadre-team\]\nurl = "https:\/\/cadre\.internal\/base\/mcp"/);
  });
});
