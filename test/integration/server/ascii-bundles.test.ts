/**
 * The built bundles are ASCII only (esbuild.mjs `asciiOnly`): Node keeps every loaded module's source text
 * in memory, one byte per character for an all-ASCII text and two otherwise, so one em dash in a comment
 * doubled dist/server.js's 6 MB source in the main thread and skills.js's in every agent worker (bench/memory.ts,
 * default warm pool: 241 MB before, 215 MB after). The rewrite turns characters into \uXXXX escapes, which mean
 * the same in comments, regular expressions and strings; only a tagged template's `raw` text would see the
 * difference, so no tagged template of the bundles may carry such an escape.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { ensureBuilt } from '../../support/server-process';

const DIST = path.resolve(__dirname, '../../../dist');
const NON_ASCII_ESCAPE = /\\u(?:00[89a-f][0-9a-f]|0[1-9a-f][0-9a-f]{2}|[1-9a-f][0-9a-f]{3})/i;

describe('built bundles are ASCII only (their source is held at one byte per character)', function () {
  this.timeout(120_000);
  before(() => ensureBuilt());

  const bundles = (): string[] => readdirSync(DIST).filter((f) => f.endsWith('.js'));

  it('every JavaScript bundle in dist/ has no character outside ASCII', () => {
    const files = bundles();
    assert.ok(files.includes('server.js') && files.includes('skills.js') && files.includes('worker.js'), `the bundles are built: ${files.join(', ')}`);
    for (const f of files) {
      const text = readFileSync(path.join(DIST, f), 'utf8');
      const at = text.search(/[^\x00-\x7f]/);
      assert.equal(at, -1, `${f} has a non-ASCII character at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`);
    }
  });

  it('no tagged template in the bundles carries an escaped non-ASCII character (its raw text would differ)', () => {
    // dist/typescript.js is the compiler as it ships (no rewrite needed): 9 MB not worth parsing here.
    for (const f of bundles().filter((b) => b !== 'typescript.js')) {
      const source = ts.createSourceFile(f, readFileSync(path.join(DIST, f), 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
      const found: string[] = [];
      const visit = (node: ts.Node): void => {
        if (ts.isTaggedTemplateExpression(node) && NON_ASCII_ESCAPE.test(node.template.getText(source))) found.push(node.getText(source).slice(0, 120));
        ts.forEachChild(node, visit);
      };
      visit(source);
      assert.deepEqual(found, [], `${f}: tagged templates whose raw text holds an escaped non-ASCII character`);
    }
  });
});
