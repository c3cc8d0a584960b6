// ESLint (flat config) with typescript-eslint's type information, run by `npm test` (`npm run lint`).
// Errors are what loses work silently (a promise nobody awaits, an async callback whose rejection
// nobody sees) and the engine's boundary; size and complexity are warnings to read, not to obey.
// docs/decisions.md, "ESLint in npm test", says why each rule is here and how long it takes.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const ENGINE = 'server/src/engine';
const ROOT = import.meta.dirname;

/**
 * What the engine may import besides its own modules: pure computation only. Anything else (the
 * file system, processes, the network, VS Code, LSP, storage, a door's folder) reaches it through a
 * port (server/src/engine/ports.ts). Type-only imports count too: a type taken from a door's module
 * is a dependency of the design even when the compiler erases it (test/unit/engine/boundary.test.ts
 * checks the runtime graph).
 */
const ENGINE_ALLOWED_PACKAGES = ['zod', 'node:crypto'];
/** Named with their reason, so that the message says what to do instead. */
const ENGINE_FORBIDDEN = [
  ['node:fs', 'fs', 'fs/promises', 'node:fs/promises'].map((name) => [name, 'the engine reads and writes through the store and attachment ports (engine/ports.ts)']),
  ['child_process', 'node:child_process'].map((name) => [name, 'processes are started by the doors and workers, not the engine']),
  ['http', 'node:http', 'https', 'node:https', 'net', 'node:net', 'undici'].map((name) => [name, 'the network belongs to the doors (http/, integrations/); the engine gets a port']),
  ['vscode'].map((name) => [name, 'the engine knows nothing of VS Code']),
  ['vscode-languageserver', 'vscode-languageserver/node', 'vscode-languageserver-textdocument', 'vscode-languageserver-protocol', 'vscode-jsonrpc']
    .map((name) => [name, 'LSP is a door (server/src/lsp); it adapts the engine, not the reverse']),
  ['lowdb', 'lowdb/node', 'better-sqlite3'].map((name) => [name, 'storage is behind the CollectionStore port (engine/ports.ts)']),
].flat();

/** Folders under server/src at the time of writing; the pattern below refuses any path out of the engine, listed or not. */
const DOORS = readdirSync(join(ROOT, 'server/src')).filter((d) => d !== 'engine' && statSync(join(ROOT, 'server/src', d)).isDirectory());

/** Depth of the deepest engine folder (engine/ itself is 0). */
function maxDepth(dir, depth = 0) {
  return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())
    .reduce((m, e) => Math.max(m, maxDepth(join(dir, e.name), depth + 1)), depth);
}

/**
 * One block per folder depth: a relative specifier that climbs out of server/src/engine is refused
 * unless it lands in protocol/ (the shared event and LSP types). Relative paths are text to ESLint,
 * so the number of `../` that leaves the engine depends on how deep the importing file is.
 */
function engineBlocks() {
  const blocks = [];
  // Two levels more than today's deepest folder, so a new subfolder is covered before anyone thinks of it.
  for (let d = 0; d <= maxDepth(join(ROOT, ENGINE)) + 2; d++) {
    const up = `(?:\\.\\./){${d + 1}}`;
    blocks.push({
      files: [`${ENGINE}/${'*/'.repeat(d)}*.ts`],
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', {
          paths: ENGINE_FORBIDDEN.map(([name, why]) => ({ name, message: `server/src/engine must not import ${name}: ${why}.` })),
          patterns: [
            {
              // Out of engine/ into server/src/<door>/, server/, or anywhere but protocol/.
              regex: `^${up}(?!engine/|\\.\\./\\.\\./protocol/)`,
              message: `server/src/engine must not import from outside the engine (${DOORS.join(', ')}...): own the type in engine/ and let the other module import it, or add a port.`,
            },
            {
              // Any package but the allowed pure ones (the named ones above have their own message).
              regex: `^(?!\\.|${[...ENGINE_ALLOWED_PACKAGES, ...ENGINE_FORBIDDEN.map(([n]) => n)].map((n) => `${n.replace(/[./]/g, (c) => `\\${c}`)}$`).join('|')})`,
              message: `server/src/engine may import only ${ENGINE_ALLOWED_PACKAGES.join(' and ')} among packages (pure computation); reach anything else through a port (engine/ports.ts).`,
            },
          ],
        }],
      },
    });
  }
  return blocks;
}

/** The engine's import rules alone (test/unit/engine/lint-boundary.test.ts runs them on sample imports). */
export const engineImportBlocks = engineBlocks();

export default defineConfig(
  // What git ignores (local scratch files, test artifacts) is not linted either.
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'test/fixtures/**', '.scratch/**', '.cadre-test/**', 'bench/results/**', 'test/e2e/artifacts/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: ROOT },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    // Some tests carry directives for rules of typescript-eslint's recommended sets that this config does
    // not turn on (no-require-imports, no-explicit-any); they are harmless and kept for when it does.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the server process).
      // Fire-and-forget is allowed, but written as `void p` next to a comment saying why.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true, ignoreIIFE: false }],
      '@typescript-eslint/no-misused-promises': ['error', {
        checksConditionals: true,
        checksSpreads: true,
        checksVoidReturn: {
          // An async listener of an EventEmitter, a timer or a request handler: its rejection is lost. Kept on.
          arguments: true,
          // JSX is not used; object members typed `() => void` given an async function: same loss. Kept on.
          attributes: false,
          properties: true,
          returns: true,
          variables: true,
          // A subclass may override a void method with an async one when the base class never awaits:
          // reported by `properties`/`arguments` where it is passed on; too noisy on its own.
          inheritedMethods: false,
        },
      }],
      // Read, not obeyed: a function or a file past these sizes is a candidate to split when next touched.
      complexity: ['warn', { max: 25 }],
      'max-lines': ['warn', { max: 500, skipBlankLines: true, skipComments: true }],
    },
  },
  ...engineImportBlocks,
);
