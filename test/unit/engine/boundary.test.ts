import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

/** The engine knows nothing of VS Code, HTTP, LSP or the file system: its doors and adapters do. */
const BANNED = [/^vscode/, /^node:(fs|child_process|http|https|net)(\/|$)/, /^(fs|child_process|http|https|net)$/, /^lowdb/, /^undici/, /^simple-git/, /\/(http|lsp|store|audit\/jsonl)/];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('engine boundary', () => {
  it('no module under server/src/engine imports VS Code, HTTP, LSP, the file system or a storage library', () => {
    const root = path.resolve(__dirname, '../../../server/src/engine');
    const offenders: string[] = [];
    for (const file of files(root)) {
      const src = readFileSync(file, 'utf8');
      for (const m of src.matchAll(/^\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
        const spec = m[1]!;
        if (spec.startsWith('.') && !path.resolve(path.dirname(file), spec).startsWith(path.resolve(root, '..'))) continue;
        if (BANNED.some((re) => re.test(spec))) offenders.push(`${path.relative(root, file)} imports ${spec}`);
      }
    }
    assert.deepEqual(offenders, []);
  });
});
