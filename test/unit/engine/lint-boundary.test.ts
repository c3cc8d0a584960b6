/**
 * The engine's import rules of eslint.config.mjs, run on sample files placed at engine depths. They
 * cover what the import graph of boundary.test.ts cannot see: a type-only import, erased by the
 * compiler, of a door's module (the engine must own its settings and model types).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = path.resolve(__dirname, '../../..');

let linter: Linter;
let config: Linter.Config[];

/** The rule ids and messages ESLint reports for `code` as the file `rel` (relative to the repository). */
function lint(rel: string, code: string): string[] {
  return linter.verify(code, config, { filename: path.join(ROOT, rel) }).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('engine boundary (ESLint import rules, type-only imports included)', () => {
  before(async () => {
    // The config is an ES module outside the TypeScript project: loaded at run time, typed by hand.
    const mod = await import(pathToFileURL(path.join(ROOT, 'eslint.config.mjs')).href) as { engineImportBlocks: Linter.Config[] };
    assert.ok(mod.engineImportBlocks.length >= 3, 'one block per engine folder depth');
    linter = new Linter({ cwd: ROOT });
    config = [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, plugins: { '@typescript-eslint': tseslint.plugin as never } },
      ...mod.engineImportBlocks,
    ];
  });

  it('refuses a type-only import of a door module (the config schema, the llm module), at every depth', () => {
    assert.equal(lint('server/src/engine/x.ts', "import type { CadreConfig } from '../config/schema';\nexport type X = CadreConfig;\n").length, 1);
    assert.equal(lint('server/src/engine/rigor/x.ts', "import type { CompletionRequest } from '../../llm/model';\nexport type X = CompletionRequest;\n").length, 1);
    assert.equal(lint('server/src/engine/rigor/x.ts', "export type { CompletionRequest } from '../../llm/model';\n").length, 1);
    assert.equal(lint('server/src/engine/a/b/x.ts', "import type { Door } from '../../../http/route';\nexport type X = Door;\n").length, 1);
  });

  it('refuses the file system, processes, the network, VS Code, LSP and storage libraries, named or not', () => {
    for (const mod of ['node:fs', 'fs', 'fs/promises', 'node:fs/promises', 'child_process', 'http', 'https', 'net', 'vscode', 'vscode-languageserver', 'vscode-languageserver/node', 'lowdb', 'undici', 'yaml']) {
      const found = lint('server/src/engine/rigor/x.ts', `import * as m from '${mod}';\nexport const x = m;\n`);
      assert.equal(found.length, 1, `${mod}: ${JSON.stringify(found)}`);
      assert.match(found[0]!, /no-restricted-imports: .*server\/src\/engine/);
    }
    assert.equal(lint('server/src/engine/x.ts', "import 'node:fs';\n").length, 1, 'a bare import');
  });

  it('allows the engine its own modules, protocol/, zod and node:crypto', () => {
    assert.deepEqual(lint('server/src/engine/x.ts', [
      "import type { EngineEvent } from '../../../protocol/events';",
      "import { createHash } from 'node:crypto';",
      "import { z } from 'zod';",
      "import { MessageBus } from './bus';",
      "import type { AcmfMode } from './catalog/enums';",
      'export type X = [EngineEvent, typeof createHash, typeof z, MessageBus, AcmfMode];',
    ].join('\n')), []);
    assert.deepEqual(lint('server/src/engine/rigor/x.ts', [
      "import type { Phase } from '../../../../protocol/events';",
      "import type { ProposedAction } from '../acmf/records';",
      "import type { EngineSettings } from '../settings';",
      'export type X = [Phase, ProposedAction, EngineSettings];',
    ].join('\n')), []);
  });

  it('leaves the doors free to import the engine and the world', () => {
    assert.deepEqual(lint('server/src/config/x.ts', "import { readFileSync } from 'node:fs';\nimport type { EngineSettings } from '../engine/settings';\nexport type X = [typeof readFileSync, EngineSettings];\n"), []);
  });
});
