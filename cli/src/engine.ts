/**
 * Loads engine-entry.ts on first use: from dist/cli-engine.js next to the built CLI, else (the CLI
 * run from its sources, e.g. by tests under tsx) the module itself. The path is computed, so esbuild
 * does not pull the engine into dist/cli.js.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type * as EngineEntry from './engine-entry';

let loaded: typeof EngineEntry | null = null;

export function engine(): typeof EngineEntry {
  if (loaded) return loaded;
  const bundled = path.join(__dirname, 'cli-engine.js');
  const file = existsSync(bundled) ? bundled : path.join(__dirname, 'engine-entry');
  loaded = require(file) as typeof EngineEntry;
  return loaded;
}
