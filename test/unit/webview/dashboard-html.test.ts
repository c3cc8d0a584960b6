import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { buildDashboardHtml, dashboardCsp, makeNonce } from '../../../client/src/dashboard-html';

const cspSource = 'https://file+.vscode-resource.vscode-cdn.net';
const scriptUri = 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js';

function cspOf(html: string): Map<string, string[]> {
  const m = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
  assert.ok(m, 'a CSP meta tag');
  return new Map(m[1]!.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k!, v]));
}

describe('webview: the dashboard HTML', () => {
  it('makes fresh base64url nonces', () => {
    const a = makeNonce();
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, makeNonce());
  });

  it('has a strict CSP carrying the nonce', () => {
    const nonce = makeNonce();
    const html = buildDashboardHtml({ cspSource, scriptUri, nonce });
    const csp = cspOf(html);
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.deepEqual(csp.get('script-src'), [`'nonce-${nonce}'`]);
    assert.deepEqual(csp.get('style-src'), [cspSource, `'nonce-${nonce}'`]);
    assert.deepEqual(csp.get('img-src'), [cspSource, 'data:']);
    for (const values of csp.values()) {
      assert.ok(!values.includes("'unsafe-inline'"), 'no unsafe-inline');
      assert.ok(!values.includes("'unsafe-eval'"), 'no unsafe-eval');
      assert.ok(!values.includes('*') && !values.includes('https:') && !values.includes('http:'), 'no wildcard sources');
    }
    assert.equal(dashboardCsp(cspSource, nonce), html.match(/content="([^"]+)"/)![1]);
  });

  it('loads only the local script, with the nonce, and nonce\'d styles; nothing remote', () => {
    const nonce = makeNonce();
    const html = buildDashboardHtml({ cspSource, scriptUri, nonce });
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1);
    assert.ok(scripts[0]!.includes(`nonce="${nonce}"`));
    assert.ok(scripts[0]!.includes(`src="${scriptUri}"`));
    const styles = [...html.matchAll(/<style\b([^>]*)>/g)].map((m) => m[1]!);
    assert.deepEqual(styles, [` nonce="${nonce}"`]);
    // Every URL is the webview's own resource origin.
    const urls = [...html.matchAll(/\b(?:https?:)?\/\/[^\s"')]+/g)].map((m) => m[0]);
    assert.ok(urls.length > 0);
    // Nonces are base64url (CSP allows '-' and '_'): never a '/' that a URL check could trip on.
    for (let i = 0; i < 200; i++) assert.match(makeNonce(), /^[A-Za-z0-9_-]{43}$/);
    for (const u of urls) assert.ok(u.startsWith(cspSource), `remote url ${u}`);
    assert.ok(!/<link\b/.test(html), 'no stylesheet links');
    assert.ok(!/\sstyle="/.test(html), 'no inline style attributes');
    assert.ok(!/\son[a-z]+="/.test(html), 'no inline event handlers');
    assert.ok(html.includes('<div id="root">'));
  });

  it('uses only the theme\'s --vscode-* colours', () => {
    const html = buildDashboardHtml({ cspSource, scriptUri, nonce: makeNonce() });
    const css = /<style[^>]*>([\s\S]*?)<\/style>/.exec(html)![1]!;
    assert.ok(css.includes('var(--vscode-foreground)'));
    assert.ok(!/#[0-9a-f]{3,8}\b/i.test(css), 'no hard-coded hex colours');
    assert.ok(!/rgba?\(/.test(css), 'no hard-coded rgb colours');
  });

  it('escapes the script URI and rejects a bad nonce', () => {
    const html = buildDashboardHtml({ cspSource, scriptUri: `${scriptUri}?a="><script>`, nonce: makeNonce() });
    assert.ok(!html.includes('"><script>'));
    assert.throws(() => buildDashboardHtml({ cspSource, scriptUri, nonce: `abc"><script>` }));
    assert.throws(() => buildDashboardHtml({ cspSource, scriptUri, nonce: 'short' }));
  });

  it('keeps the webview script free of inline styles, innerHTML and network calls', () => {
    const src = readFileSync('webview/src/main.ts', 'utf8');
    for (const banned of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', "createElement('style')", 'fetch(', 'XMLHttpRequest', 'WebSocket', 'eval(', "setAttribute('style'"]) {
      assert.ok(!src.includes(banned), `main.ts uses ${banned}`);
    }
  });
});
