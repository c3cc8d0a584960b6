/**
 * The Review phase's checks that need the outside world: real paths (symlinks resolved), parsers,
 * secret rules, glob matching. The engine receives them as the ReviewChecks port.
 */
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { Script } from 'node:vm';
import { parseAllDocuments } from 'yaml';
import { matchesGlob } from '../engine/acmf/risk';
import type { ReviewChecks } from '../engine/rigor/review-subject';
import { findSecrets } from './secret-rules';
import { isProtected } from './workspace/files';

/** Resolves symlinks of the longest existing prefix, so a link pointing out of the workspace is caught. */
function realish(p: string): string {
  let current = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

export function isInside(workspace: string, candidate: string): boolean {
  const root = realish(workspace);
  const target = realish(path.isAbsolute(candidate) ? candidate : path.join(workspace, candidate));
  const rel = path.relative(root, target);
  // The data directory and key material count as outside even when the workspace holds them.
  return (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) && !isProtected(target);
}

function checkSyntax(file: string, content: string): { ok: boolean; reason: string } | null {
  const ext = path.extname(file).toLowerCase();
  try {
    switch (ext) {
      case '.json':
        JSON.parse(content);
        return { ok: true, reason: 'valid JSON' };
      case '.yaml':
      case '.yml': {
        // Every document of a stream (Kubernetes manifests, Helm output hold several separated by ---).
        const docs = parseAllDocuments(content);
        const bad = (Array.isArray(docs) ? docs : []).find((d) => d.errors.length > 0);
        return bad ? { ok: false, reason: bad.errors[0]!.message } : { ok: true, reason: 'valid YAML' };
      }
      case '.cjs':
        // Compiles without running: a syntax error throws here.
        new Script(content, { filename: file });
        return { ok: true, reason: 'valid JavaScript' };
      default:
        return null;
    }
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

export const reviewChecks: ReviewChecks = {
  insideWorkspace: isInside,
  syntax: checkSyntax,
  secrets: findSecrets,
  matchesGlob,
};
