import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { analyzeTrace, renderDebugReport } from '../../../../server/src/skills/debug/analyze';
import { classify } from '../../../../server/src/skills/debug/causes';

/** A TypeScript service whose line SOURCE_LINE throws; the compiled JavaScript's lines differ (types and the interface are erased). */
const SOURCE = `interface Order {
  id: string;
  customer?: { id: string; email: string };
  items: Array<{ sku: string; qty: number }>;
}

type Totals = Record<string, number>;

export function total(order: Order | undefined): number {
  let n = 0;
  const seen: Totals = {};
  // the order may be missing: the next line reads items of undefined
  for (const item of order!.items) {
    seen[item.sku] = (seen[item.sku] ?? 0) + item.qty;
    n += item.qty;
  }
  return n;
}

total(undefined);
`;

const SOURCE_LINE = SOURCE.split('\n').findIndex((l) => l.includes('order!.items')) + 1;

/** Compiles SOURCE with the TypeScript compiler into `outDir`, with a map file or an inline map. */
function compile(ws: string, inline: boolean, opts: { sourceRoot?: string } = {}): string {
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  mkdirSync(path.join(ws, 'build'), { recursive: true });
  writeFileSync(path.join(ws, 'src/orders.ts'), SOURCE);
  const out = ts.transpileModule(SOURCE, {
    fileName: 'orders.ts',
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, ...(inline ? { inlineSourceMap: true } : { sourceMap: true }), ...(opts.sourceRoot ? { sourceRoot: opts.sourceRoot } : {}) },
  });
  let js = out.outputText;
  if (!inline) {
    // tsc writes `sources` relative to the map: build/orders.js.map → ../src/orders.ts.
    const map = JSON.parse(out.sourceMapText!) as { sources: string[]; file: string };
    map.sources = opts.sourceRoot ? ['orders.ts'] : ['../src/orders.ts'];
    map.file = 'orders.js';
    writeFileSync(path.join(ws, 'build/orders.js.map'), JSON.stringify(map));
    js = js.replace(/\/\/# sourceMappingURL=.*$/m, '//# sourceMappingURL=orders.js.map');
  } else {
    // An inline map names the source as compiled (orders.ts): point it at the source folder.
    js = js.replace(/sourceMappingURL=data:application\/json;base64,(\S+)/, (_m, b64: string) => {
      const map = JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as { sources: string[] };
      map.sources = ['../src/orders.ts'];
      return `sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}`;
    });
  }
  writeFileSync(path.join(ws, 'build/orders.js'), js);
  return js;
}

/** Runs the compiled file with node (no source-map support): the trace names build/orders.js. */
function run(ws: string): string {
  const r = spawnSync(process.execPath, [path.join(ws, 'build/orders.js')], { cwd: ws, encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  return r.stderr;
}

describe('debug-ai: frames of compiled TypeScript mapped through source maps', () => {
  for (const inline of [false, true]) {
    it(`maps build/orders.js back to the source line of src/orders.ts (${inline ? 'inline data: URL' : '.map file next to it'})`, () => {
      const ws = mkdtempSync(path.join(tmpdir(), 'cadre-srcmap-'));
      const js = compile(ws, inline);
      const trace = run(ws);
      assert.match(trace, /build[\\/]orders\.js:\d+:\d+/);
      const jsLine = js.split('\n').findIndex((l) => l.includes('order.items')) + 1;
      assert.ok(jsLine > 0 && jsLine !== SOURCE_LINE, `the compiled line (${jsLine}) differs from the source line`);
      const r = analyzeTrace(trace, ws);
      assert.equal(r.origin?.path, 'src/orders.ts');
      assert.equal(r.origin?.line, SOURCE_LINE);
      assert.match(r.origin?.code ?? '', /for \(const item of order!\.items\)/);
      assert.deepEqual({ path: r.origin?.generated?.path, line: r.origin?.generated?.line, map: r.origin?.generated?.map },
        { path: 'build/orders.js', line: jsLine, map: inline ? 'inline' : 'build/orders.js.map' });
      assert.equal(r.classification?.title, 'Property access on undefined/null');
      assert.match(renderDebugReport(r), new RegExp(`src/orders\\.ts:${SOURCE_LINE} .*\\(compiled build/orders\\.js:\\d+, source map`));
    });
  }

  it('resolves sources against sourceRoot', () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-srcmap-root-'));
    compile(ws, false, { sourceRoot: '../src/' });
    const r = analyzeTrace(run(ws), ws);
    assert.equal(r.origin?.path, 'src/orders.ts');
    assert.equal(r.origin?.line, SOURCE_LINE);
  });

  it('without a map the compiled frame stays as it is; a map pointing outside the workspace is not followed', () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-srcmap-none-'));
    compile(ws, false);
    writeFileSync(path.join(ws, 'build/orders.js.map'), JSON.stringify({ version: 3, sources: ['../../../etc/orders.ts'], names: [], mappings: 'AAAA' }));
    const r = analyzeTrace(run(ws), ws);
    assert.equal(r.origin?.path, 'build/orders.js');
    assert.equal(r.origin?.generated, undefined);
  });
});

describe('debug-ai: common causes of the ecosystems it parses', () => {
  const cause = (type: string, message: string, language: 'node' | 'python' | 'java' | 'go' = 'node', code?: string) =>
    classify([{ type, message, ...(code ? { code } : {}) }], language)?.cause.id;
  it('Node: ESM/CJS mix, ESM resolution, unhandled rejection, headers sent, stack overflow, JSON, DNS', () => {
    assert.equal(cause('Error', 'require() of ES Module /app/node_modules/node-fetch/src/index.js not supported.', 'node', 'ERR_REQUIRE_ESM'), 'node-esm-cjs');
    assert.equal(cause('ReferenceError', 'require is not defined in ES module scope, you can use import instead'), 'node-esm-cjs');
    assert.equal(cause('SyntaxError', 'Cannot use import statement outside a module'), 'node-esm-cjs');
    assert.equal(cause('Error', "Cannot find module '/app/dist/util' imported from /app/dist/index.js", 'node', 'ERR_MODULE_NOT_FOUND'), 'node-esm-resolution');
    assert.equal(cause('Error', "Cannot find module 'express'"), 'node-module-not-found');
    assert.equal(cause('Error', 'This error originated either by throwing inside of an async function without a catch block', 'node', 'ERR_UNHANDLED_REJECTION'), 'node-unhandled-rejection');
    assert.equal(cause('Error', 'Cannot set headers after they are sent to the client', 'node', 'ERR_HTTP_HEADERS_SENT'), 'node-headers-sent');
    assert.equal(cause('RangeError', 'Maximum call stack size exceeded'), 'node-stack-overflow');
    assert.equal(cause('SyntaxError', 'Unexpected token < in JSON at position 0'), 'node-json-parse');
    assert.equal(cause('Error', 'getaddrinfo ENOTFOUND db', 'node', 'ENOTFOUND'), 'enotfound');
    assert.equal(cause('Error', 'listen EADDRINUSE: address already in use :::3000', 'node', 'EADDRINUSE'), 'eaddrinuse');
    assert.equal(cause('Error', 'connect ECONNREFUSED 127.0.0.1:5432', 'node', 'ECONNREFUSED'), 'econnrefused');
  });
  it('Python, Java and Go', () => {
    assert.equal(cause('ModuleNotFoundError', "No module named 'requests'", 'python'), 'python-import');
    assert.equal(cause('KeyError', "'user_id'", 'python'), 'python-keyerror');
    assert.equal(cause('AttributeError', "'NoneType' object has no attribute 'name'", 'python'), 'python-none-attribute');
    assert.equal(cause('RecursionError', 'maximum recursion depth exceeded', 'python'), 'python-recursion');
    assert.equal(cause('UnicodeDecodeError', "'ascii' codec can't decode byte 0xc3", 'python'), 'python-unicode');
    assert.equal(cause('TypeError', 'handle() missing 1 required positional argument: \'event\'', 'python'), 'python-type-args');
    assert.equal(cause('java.lang.NullPointerException', 'Cannot invoke "String.length()" because "name" is null', 'java'), 'java-npe');
    assert.equal(cause('java.lang.ClassCastException', 'class A cannot be cast to class B', 'java'), 'java-class-cast');
    assert.equal(cause('java.lang.NumberFormatException', 'For input string: "12a"', 'java'), 'java-number-format');
    assert.equal(cause('panic', 'runtime error: invalid memory address or nil pointer dereference', 'go'), 'go-nil-deref');
  });
});
