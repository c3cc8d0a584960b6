/**
 * Where cost-ai's exports come from, all through WorkspaceFiles (a path outside the workspace, or a
 * symlink leading out, is refused by name and never read):
 *
 *  - `input.export`: a workspace-relative (or absolute, inside) file or folder, or a list of them.
 *    Every file named (or in a named folder) must be a known export: anything else stops the step
 *    (needs input, naming the file and line).
 *  - else the conventional places: the `*.csv`, `*.csv.gz` (and `*.parquet`) files of `billing/`, `cost/`,
 *    `costs/` and `cur/`, strictly;
 *    and any other `*.csv` (or `*.csv.gz`, as AWS delivers the CUR) whose header is a known export
 *    (a CSV with another header is just not a bill: it is noted, never an error).
 *
 * gzip is inflated in memory; Parquet (the other CUR delivery format) is not read: it is named as such.
 */
import { gunzipSync } from 'node:zlib';
import { walkFiles, WorkspaceFiles } from '../workspace/files';
import { ExportError, parseExport, type CostLine, type ExportFormat } from './formats';

export const LOOKED_AT = 'input.export, billing/, cost/, costs/, cur/, *.csv, *.csv.gz';
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.next', '.cache', 'vendor', 'target', '.venv', 'venv', '__pycache__', 'out', '.cadre']);
const CONVENTIONAL = /^(?:billing|cost|costs|cur)\//i;
const BILL_FILE = /\.(?:csv(?:\.gz)?|parquet)$/i;
const MAX_BYTES = 256 * 1024 * 1024;
const MAX_FILES = 200;

export interface ExportFile {
  file: string;
  format: ExportFormat;
  records: number;
  tagKeys: string[];
}

export interface LoadedExports {
  lines: CostLine[];
  files: ExportFile[];
  /** Files looked at and left out (not a billing export), with why. */
  ignored: string[];
  refused: string[];
  origin: 'input.export' | 'conventional places';
  problem?: { field: string; message: string };
}

function givenList(v: unknown): string[] | undefined {
  if (typeof v === 'string' && v.trim()) return [v.trim()];
  if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string' && x.trim())) return (v as string[]).map((x) => x.trim());
  return undefined;
}

function textOf(ws: WorkspaceFiles, rel: string): { text: string } | { error: string } {
  if (/\.parquet$/i.test(rel)) return { error: `${rel}: Parquet is not read; deliver the report as CSV (or CSV.gz)` };
  const r = ws.readBytes(rel, MAX_BYTES);
  if (!r.ok) return { error: `${rel} is ${r.reason}; not read` };
  if (r.buf[0] === 0x1f && r.buf[1] === 0x8b) {
    try { return { text: gunzipSync(r.buf, { maxOutputLength: MAX_BYTES }).toString('utf8') }; } catch (e) {
      return { error: `${rel}: not a readable gzip file (${(e as Error).message})` };
    }
  }
  return { text: r.buf.toString('utf8') };
}

export function loadExports(workspace: string, input: Record<string, unknown>): LoadedExports {
  const ws = new WorkspaceFiles(workspace);
  const out: LoadedExports = { lines: [], files: [], ignored: [], refused: [], origin: 'conventional places' };
  const candidates: Array<{ rel: string; strict: boolean }> = [];
  const raw = input['export'];
  if (raw !== undefined && raw !== null && raw !== '') {
    const given = givenList(raw);
    if (!given) return { ...out, problem: { field: 'export', message: 'input.export must be a workspace-relative file or folder (or a list of them)' } };
    out.origin = 'input.export';
    for (const g of given) {
      const r = ws.resolve(g);
      if (!r.ok) {
        out.refused.push(...ws.refusalLines());
        return { ...out, problem: { field: 'export', message: r.reason === 'not found' ? `input.export: ${g} does not exist in the workspace` : `input.export: ${g} is ${r.reason}; not read` } };
      }
      if (ws.isFile(g)) candidates.push({ rel: r.rel || r.real, strict: true });
      else {
        const prefix = r.rel ? `${r.rel}/` : r.real === ws.root ? '' : `${r.real}/`;
        const files = walkFiles(r.real, { skipDirs: SKIP_DIRS, limit: MAX_FILES }).sort().map((f) => prefix + f);
        if (!files.length) return { ...out, problem: { field: 'export', message: `input.export: ${g} holds no file` } };
        for (const f of files) candidates.push({ rel: f, strict: true });
      }
    }
  } else {
    const all = walkFiles(ws.root, { skipDirs: SKIP_DIRS, limit: 20000, onSkip: (rel, why) => { if (why === 'outside the workspace' || why.startsWith('protected')) out.refused.push(`${rel}: ${why}, not read`); } }).sort();
    // In the conventional folders a CSV (or a Parquet CUR, named as unread) is a bill; a JSON of utilisation or a README beside it is not.
    for (const f of all) if (CONVENTIONAL.test(f) && BILL_FILE.test(f)) candidates.push({ rel: f, strict: true });
    for (const f of all) if (!CONVENTIONAL.test(f) && /\.csv(?:\.gz)?$/i.test(f) && candidates.length < MAX_FILES) candidates.push({ rel: f, strict: false });
  }
  for (const c of candidates) {
    const t = textOf(ws, c.rel);
    if ('error' in t) {
      if (c.strict) return { ...out, problem: { field: 'export', message: t.error } };
      out.ignored.push(t.error);
      continue;
    }
    try {
      const p = parseExport(c.rel, t.text);
      out.files.push({ file: c.rel, format: p.format, records: p.records, tagKeys: p.tagKeys });
      for (const l of p.lines) out.lines.push(l); // no spread: an export has far more lines than a call has arguments
    } catch (e) {
      if (!(e instanceof ExportError)) throw e;
      // A stray CSV that is no bill is only noted; a file that is a bill (or was named as one) with a broken row stops the step.
      const notABill = /^(not a billing export|not valid CSV|empty file)/.test(e.message);
      if (c.strict || !notABill) return { ...out, problem: { field: 'export', message: `${c.rel}:${e.line}: ${e.message}` } };
      out.ignored.push(`${c.rel}: ${e.message}`);
    }
  }
  return out;
}
