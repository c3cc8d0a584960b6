/**
 * policy-ai `enforce`: turns the auto-fixable violations of a check into new file texts. YAML is
 * edited with `yaml`'s Document API on a fresh parse of the file and only the documents that changed
 * are re-serialised (comments, `# Source:` lines, quoting and the other documents stay as written);
 * Dockerfiles get a one-line replacement. Nothing here writes: skill.ts decides that under ACMF.
 */
import { isMap, isScalar, isSeq, parseAllDocuments, type Document } from 'yaml';
import type { CheckedFile } from './check';
import type { FixOp, Violation, YamlPath } from './model';

export interface FilePlan {
  file: string;
  before: string;
  after: string;
  /** Violations whose edits are in `after`. */
  fixed: Violation[];
}

/** Indentation of the file as written, so that a re-serialised document looks like its neighbours. */
function styleOf(text: string): { indent: number; indentSeq: boolean } {
  const lines = text.split(/\r?\n/);
  let indent = 0;
  let indentSeq: boolean | undefined;
  for (let i = 0; i + 1 < lines.length; i++) {
    const m = /^(\s*)[^\s#-][^:]*:\s*(#.*)?$/.exec(lines[i]!);
    if (!m) continue;
    const next = lines.slice(i + 1).find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
    if (!next) continue;
    const n = /^(\s*)(-\s)?/.exec(next)!;
    const delta = n[1]!.length - m[1]!.length;
    if (n[2]) { if (indentSeq === undefined) indentSeq = delta > 0; } else if (!indent && delta > 0) indent = delta;
    if (indent && indentSeq !== undefined) break;
  }
  return { indent: indent || 2, indentSeq: indentSeq ?? true };
}

/** An empty flow collection (`securityContext: {}`) on the way becomes a block one, so that keys added to it read like the file. */
function unflowPrefixes(doc: Document.Parsed, path: YamlPath): void {
  for (let i = 1; i <= path.length; i++) {
    const n = doc.getIn(path.slice(0, i), true);
    if ((isMap(n) || isSeq(n)) && n.flow && n.items.length === 0) n.flow = false;
  }
}

function applyYamlOp(doc: Document.Parsed, op: Extract<FixOp, { doc: number }>): void {
  if (op.kind === 'yaml-delete') { doc.deleteIn(op.path); return; }
  unflowPrefixes(doc, op.path.slice(0, -1));
  if (op.kind === 'yaml-set') {
    const current = doc.getIn(op.path, true);
    if (JSON.stringify(doc.getIn(op.path)) === JSON.stringify(op.value)) return;
    // A scalar changes in place: its comment (`privileged: true # why`) and quoting stay.
    if (isScalar(current) && (op.value === null || typeof op.value !== 'object')) { current.value = op.value; return; }
    doc.setIn(op.path, doc.createNode(op.value));
    return;
  }
  const seq = doc.getIn(op.path, true);
  if (isSeq(seq) && !seq.items.some((it) => (it as { value?: unknown }).value === op.value)) seq.add(doc.createNode(op.value));
}

function planYaml(f: CheckedFile, fixes: Violation[]): string {
  const docs = parseAllDocuments(f.text, { prettyErrors: false });
  if (!Array.isArray(docs)) return f.text;
  const touched = new Set<number>();
  for (const v of fixes) {
    for (const op of v.ops ?? []) {
      if (op.kind === 'line-replace') continue;
      const doc = docs[op.doc];
      if (!doc || doc.errors.length) continue;
      applyYamlOp(doc, op);
      touched.add(op.doc);
    }
  }
  const style = styleOf(f.text);
  let out = f.text;
  // From the last document back, so that earlier ranges stay valid.
  for (const di of [...touched].sort((a, b) => b - a)) {
    const doc = docs[di]!;
    // From the end of the previous document: the comments between (a file header, a `# Source:` line)
    // are the document's commentBefore, which toString writes again.
    const start = di === 0 ? 0 : docs[di - 1]!.range[2];
    const end = doc.range[2];
    let text = doc.toString({ lineWidth: 0, indent: style.indent, indentSeq: style.indentSeq, flowCollectionPadding: false });
    if (end >= f.text.length && !f.text.endsWith('\n')) text = text.replace(/\n$/, '');
    out = out.slice(0, start) + text + out.slice(end);
  }
  return out;
}

function planLines(f: CheckedFile, fixes: Violation[]): string {
  const eol = f.text.includes('\r\n') ? '\r\n' : '\n';
  const lines = f.text.split(/\r?\n/);
  for (const v of fixes) {
    for (const op of v.ops ?? []) {
      if (op.kind !== 'line-replace') continue;
      const l = lines[op.line - 1];
      if (l === undefined || !l.includes(op.from) || l.includes(op.to)) continue;
      lines[op.line - 1] = l.replace(op.from, op.to);
    }
  }
  return lines.join(eol);
}

/** New texts for the files that have auto-fixable violations (files left unchanged are not listed). */
export function planFixes(checked: readonly CheckedFile[], violations: readonly Violation[]): FilePlan[] {
  const byFile = new Map<string, Violation[]>();
  for (const v of violations) {
    if (v.fixable !== 'auto' || !v.ops?.length) continue;
    byFile.set(v.file, [...(byFile.get(v.file) ?? []), v]);
  }
  const plans: FilePlan[] = [];
  for (const f of checked) {
    const fixes = byFile.get(f.file);
    if (!fixes) continue;
    const after = f.type === 'dockerfile' ? planLines(f, fixes) : planYaml(f, fixes);
    if (after !== f.text) plans.push({ file: f.file, before: f.text, after, fixed: fixes });
  }
  return plans;
}
