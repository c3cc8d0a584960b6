/**
 * Source maps for debug-ai: a frame in compiled JavaScript (`build/server.js:40:11`) is mapped back to
 * the TypeScript (or other) source the developer wrote. The map comes from the compiled file's last
 * `//# sourceMappingURL=` comment (a `data:` URL, inline, or a file next to it) or, without one, a
 * `<file>.map` beside it. `sources` are resolved against the map's folder and `sourceRoot`; a source is
 * used only when it is a file of the workspace (read through its confinement, like every frame).
 * source-map-js does the decoding (docs/decisions.md: synchronous, no WebAssembly, the same
 * SourceMapConsumer API as Mozilla's source-map 0.6).
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';
import type { WorkspaceFiles } from '../workspace/files';

export interface OriginalPosition {
  /** Workspace-relative path of the source (forward slashes). */
  path: string;
  line: number;
  column?: number;
  /** How the map was found: `inline`, or the map file's workspace-relative path. */
  map: string;
}

const MAP_COMMENT = /(?:\/\/|\/\*)[#@]\s*sourceMappingURL=([^\s*'"]+)\s*(?:\*\/)?\s*$/;
const MAX_MAP_BYTES = 16 * 1024 * 1024;

/** The map's JSON and the folder its relative `sources` resolve against (workspace-relative). */
function findMap(files: WorkspaceFiles, rel: string, compiled: string): { raw: RawSourceMap; dir: string; map: string } | undefined {
  const tail = compiled.slice(-4096).split(/\r?\n/).reverse();
  const url = tail.map((l) => MAP_COMMENT.exec(l.trim())?.[1]).find((u) => u);
  const parse = (json: string): RawSourceMap | undefined => {
    try {
      const m = JSON.parse(json) as RawSourceMap;
      return m && Array.isArray(m.sources) && typeof m.mappings === 'string' ? m : undefined;
    } catch {
      return undefined;
    }
  };
  const dir = path.posix.dirname(rel);
  if (url?.startsWith('data:')) {
    const comma = url.indexOf(',');
    const meta = url.slice(5, comma);
    const body = url.slice(comma + 1);
    const raw = parse(meta.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body));
    return raw ? { raw, dir, map: 'inline' } : undefined;
  }
  const candidates = url && !/^[a-z]+:\/\//i.test(url) ? [path.posix.normalize(path.posix.join(dir, decodeURIComponent(url)))] : [];
  candidates.push(`${rel}.map`);
  for (const c of candidates) {
    if (c.startsWith('..')) continue;
    const r = files.readText(c, MAX_MAP_BYTES);
    if (!r.ok) continue;
    const raw = parse(r.text);
    if (raw) return { raw, dir: path.posix.dirname(c), map: c };
  }
  return undefined;
}

/** A source of the map as a workspace-relative path, or undefined when it leaves the workspace. */
function sourcePath(files: WorkspaceFiles, source: string, mapDir: string, workspace: string): string | undefined {
  let abs: string;
  if (source.startsWith('file://')) abs = fileURLToPath(source);
  else if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[A-Za-z]:[\\/]/.test(source)) {
    // webpack://app/./src/x.ts and similar: the path after the scheme's host, relative to the workspace.
    const p = source.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*\//i, '').replace(/^\.\//, '');
    abs = path.join(workspace, p);
  } else abs = path.isAbsolute(source) ? source : path.join(workspace, mapDir, source);
  const rel = path.relative(workspace, abs);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const posix = rel.split(path.sep).join('/');
  return files.resolve(posix).ok ? posix : undefined;
}

/**
 * Maps a position of a compiled file (workspace-relative, 1-based line and column) to its source, or
 * undefined when the file has no map, the position has no mapping, or the source is not in the workspace.
 */
export function originalPosition(files: WorkspaceFiles, workspace: string, rel: string, line: number, column?: number): OriginalPosition | undefined {
  if (!/\.[cm]?js$/i.test(rel)) return undefined;
  const text = files.readText(rel, MAX_MAP_BYTES);
  if (!text.ok) return undefined;
  const found = findMap(files, rel, text.text);
  if (!found) return undefined;
  let consumer: SourceMapConsumer;
  try {
    // sourceRoot is joined to each source by the consumer; the map's own folder is added below.
    consumer = new SourceMapConsumer(found.raw);
  } catch {
    return undefined;
  }
  // V8 columns are 1-based, source-map columns 0-based. Without a column, the line's first mapping.
  const col = column !== undefined ? column - 1 : 0;
  let pos = consumer.originalPositionFor({ line, column: col, bias: SourceMapConsumer.GREATEST_LOWER_BOUND });
  if (!pos.source) pos = consumer.originalPositionFor({ line, column: col, bias: SourceMapConsumer.LEAST_UPPER_BOUND });
  if (!pos.source || pos.line === null) return undefined;
  const p = sourcePath(files, pos.source, found.dir, workspace);
  if (!p) return undefined;
  return { path: p, line: pos.line, ...(pos.column !== null && column !== undefined ? { column: pos.column + 1 } : {}), map: found.map };
}
