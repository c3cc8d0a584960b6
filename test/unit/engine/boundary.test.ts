/**
 * The engine knows nothing of VS Code, HTTP, LSP, the file system or storage: checked on the real import
 * graph, not on the text of import lines. esbuild bundles every module under server/src/engine (so a
 * bare `import 'node:fs'`, `require`, `import()` with a literal and a path through `../config/...` are
 * all followed) and its metafile lists every file reached and every external module imported; both must
 * be on the allow-lists below. Type-only imports are erased by the compiler and vanish from this graph:
 * ESLint's no-restricted-imports on server/src/engine (eslint.config.mjs, checked by lint-boundary.test.ts)
 * refuses them, so the engine owns its settings and model types (engine/settings.ts, rigor/language-model.ts).
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '../../..');
const ENGINE = 'server/src/engine/';

/** Files outside the engine it may reach: the shared protocol types of its events. */
const ALLOWED_FILES = [/^protocol\//];
/** External modules: pure computation only (validation, hashing). */
const ALLOWED_EXTERNAL = ['zod', 'node:crypto'];

interface Graph { files: string[]; externals: Array<{ module: string; from: string }> }

async function importGraph(entryPoints: string[], cwd: string): Promise<Graph> {
  const r = await esbuild.build({
    entryPoints, absWorkingDir: cwd, bundle: true, write: false, metafile: true, platform: 'node', format: 'cjs',
    packages: 'external', outdir: path.join(tmpdir(), 'cadre-boundary-out'), logLevel: 'silent',
  });
  const externals: Graph['externals'] = [];
  for (const [from, input] of Object.entries(r.metafile.inputs)) {
    for (const imp of input.imports) if (imp.external) externals.push({ module: imp.path, from });
  }
  return { files: Object.keys(r.metafile.inputs), externals };
}

function offenders(g: Graph, insideOf: string): string[] {
  const out: string[] = [];
  for (const f of g.files) {
    if (f.startsWith(insideOf) || ALLOWED_FILES.some((re) => re.test(f))) continue;
    out.push(`reaches ${f}`);
  }
  for (const e of g.externals) if (!ALLOWED_EXTERNAL.includes(e.module)) out.push(`${e.from} imports ${e.module}`);
  return out;
}

describe('engine boundary (the real import graph)', function () {
  this.timeout(60_000);

  it('no module under server/src/engine reaches VS Code, HTTP, LSP, the file system, a storage library or a door', async () => {
    const entries = (readdirSync(path.join(ROOT, ENGINE), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts')).map((f) => `${ENGINE}${f.split(path.sep).join('/')}`);
    assert.ok(entries.length > 30, `the engine's modules (${entries.length})`);
    const g = await importGraph(entries, ROOT);
    assert.deepEqual(offenders(g, ENGINE), []);
  });

  it('the check sees what a text match missed: a bare import, require, import(), and a path out through another folder', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-boundary-'));
    try {
      writeFileSync(path.join(dir, 'door.ts'), "import { request } from 'undici';\nexport const door = request;\n");
      writeFileSync(path.join(dir, 'engine.ts'), [
        "import 'node:fs';",
        "const cp = require('child_process');",
        "export async function later() { return import('node:http'); }",
        "export { door } from './door';",
        'export const x = cp;',
      ].join('\n'));
      const g = await importGraph(['engine.ts'], dir);
      const found = offenders(g, 'engine.ts');
      for (const m of ['imports node:fs', 'imports child_process', 'imports node:http', 'reaches door.ts', 'imports undici']) {
        assert.ok(found.some((o) => o.endsWith(m)), `found ${m}: ${JSON.stringify(found)}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
