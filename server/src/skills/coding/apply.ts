/** Pure text-edit machinery for coder-ai: collect fixable findings, apply edits bottom-up, count diff lines. */
import type { StepSummary } from '../../engine/rigor/skill';
import type { Finding, TextEdit } from '../findings/finding';

export function isFinding(v: unknown): v is Finding {
  if (!v || typeof v !== 'object') return false;
  const f = v as Partial<Finding>;
  return typeof f.ruleId === 'string' && typeof f.file === 'string';
}

function findingsIn(data: unknown): Finding[] {
  if (Array.isArray(data)) return data.filter(isFinding);
  if (data && typeof data === 'object') {
    const d = data as Record<string, unknown>;
    if (Array.isArray(d['findings'])) return (d['findings'] as unknown[]).filter(isFinding);
  }
  return [];
}

function validEdit(e: unknown): e is TextEdit {
  if (!e || typeof e !== 'object') return false;
  const t = e as Partial<TextEdit>;
  const r = t.range;
  return typeof t.file === 'string' && typeof t.newText === 'string' && !!r
    && [r.startLine, r.startColumn, r.endLine, r.endColumn].every((n) => Number.isInteger(n) && n >= 1);
}

/** Findings carrying a fix with edits: input.findings first, then the previous steps' `data.findings`; de-duplicated. */
export function collectFixable(input: Record<string, unknown>, previous: readonly StepSummary[]): Finding[] {
  const all = [...findingsIn(input['findings']), ...previous.flatMap((p) => findingsIn(p.data))];
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const f of all) {
    if (!f.fix || !Array.isArray(f.fix.edits) || !f.fix.edits.length || !f.fix.edits.every(validEdit)) continue;
    const key = f.fingerprint ?? `${f.ruleId}:${f.file}:${f.range?.startLine}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}

/** A workspace-relative path that stays inside the workspace (no absolute path, no `..`). */
export function safeRelative(p: string): string | undefined {
  const n = p.replace(/\\/g, '/').replace(/^\.\//, '');
  if (!n || n.startsWith('/') || /^[A-Za-z]:/.test(n) || n.split('/').some((s) => s === '..' || s === '.git')) return undefined;
  return n;
}

function lineStarts(text: string): number[] {
  const s = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) s.push(i + 1);
  return s;
}

/** Offset of a 1-based (line, column) position, or undefined when it is outside the text. */
export function offsetOf(text: string, starts: number[], line: number, column: number): number | undefined {
  if (line === starts.length + 1 && column === 1) return text.length;
  const start = starts[line - 1];
  if (start === undefined) return undefined;
  const end = line < starts.length ? starts[line]! - 1 : text.length;
  const lineEnd = text[end - 1] === '\r' ? end - 1 : end;
  const off = start + column - 1;
  return off <= lineEnd ? off : undefined;
}

export interface ApplyResult {
  text: string;
  applied: TextEdit[];
  /** The original text each applied edit replaced (same order as `applied`). */
  replaced: string[];
  rejected: Array<{ edit: TextEdit; reason: string }>;
}

/** Applies the edits of one file bottom-up (last position first) so earlier ranges stay valid; overlapping edits are rejected. */
export function applyEdits(text: string, edits: readonly TextEdit[]): ApplyResult {
  const starts = lineStarts(text);
  const located: Array<{ edit: TextEdit; from: number; to: number }> = [];
  const rejected: ApplyResult['rejected'] = [];
  for (const edit of edits) {
    const from = offsetOf(text, starts, edit.range.startLine, edit.range.startColumn);
    const to = offsetOf(text, starts, edit.range.endLine, edit.range.endColumn);
    if (from === undefined || to === undefined || to < from) rejected.push({ edit, reason: 'range outside the file' });
    else located.push({ edit, from, to });
  }
  located.sort((a, b) => b.from - a.from || b.to - a.to);
  let out = text;
  let floor = Infinity;
  const applied: TextEdit[] = [];
  const replaced: string[] = [];
  for (const l of located) {
    if (l.to > floor) {
      rejected.push({ edit: l.edit, reason: 'overlaps another edit' });
      continue;
    }
    out = out.slice(0, l.from) + l.edit.newText + out.slice(l.to);
    floor = l.from;
    applied.unshift(l.edit);
    replaced.unshift(text.slice(l.from, l.to));
  }
  return { text: out, applied, replaced, rejected };
}

/** Lines added / removed per file (repo-relative path as in the diff header) from a unified diff. */
export function diffStats(diff: string): Map<string, { added: number; removed: number }> {
  const out = new Map<string, { added: number; removed: number }>();
  let cur: { added: number; removed: number } | undefined;
  for (const line of diff.split('\n')) {
    const m = /^diff --git a\/(.+?) b\/(.+)$/.exec(line);
    if (m) { cur = { added: 0, removed: 0 }; out.set(m[2]!, cur); continue; }
    if (!cur || line.startsWith('+++') || line.startsWith('---')) continue;
    if (line.startsWith('+')) cur.added++;
    else if (line.startsWith('-')) cur.removed++;
  }
  return out;
}
