/**
 * A tolerant reader of HCL (Terraform `.tf`) structure: blocks with labels, attributes with literal
 * values (strings, numbers, booleans, lists, objects) and, for anything computed, the expression's
 * text. It is not an evaluator (no variables, functions or modules): the Terraform checks only need the
 * literal settings and which resource an expression references. Comments (#, //, /* *\/) and heredocs
 * are understood; an unbalanced file yields what was read before the error.
 */

export type HclValue =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'list'; items: HclValue[] }
  | { kind: 'object'; attrs: Map<string, HclAttr> }
  | { kind: 'expr'; text: string };

export interface HclAttr {
  name: string;
  value: HclValue;
  /** 1-based line and column of the attribute name; `endLine`/`endColumn` after its value. */
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface HclBlock {
  type: string;
  labels: string[];
  attrs: Map<string, HclAttr>;
  blocks: HclBlock[];
  line: number;
  column: number;
}

class Reader {
  pos = 0;
  private readonly starts: number[] = [0];
  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.starts.push(i + 1);
  }
  lineCol(pos: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: pos - this.starts[lo]! + 1 };
  }
  peek(o = 0): string { return this.text[this.pos + o] ?? ''; }
  eof(): boolean { return this.pos >= this.text.length; }
  /** Skips blanks and comments; newlines too unless `inline`. */
  skip(inline = false): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\r' || (!inline && c === '\n')) this.pos++;
      else if (c === '#' || (c === '/' && this.peek(1) === '/')) { while (!this.eof() && this.peek() !== '\n') this.pos++; }
      else if (c === '/' && this.peek(1) === '*') { const e = this.text.indexOf('*/', this.pos + 2); this.pos = e === -1 ? this.text.length : e + 2; }
      else return;
    }
  }
  ident(): string {
    const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(this.text.slice(this.pos, this.pos + 200));
    if (!m) return '';
    this.pos += m[0].length;
    return m[0];
  }
}

function readString(r: Reader): string {
  // At the opening quote. `${...}` and `%{...}` may hold nested quotes and braces.
  r.pos++;
  let out = '';
  while (!r.eof()) {
    const c = r.peek();
    if (c === '\\') { out += r.text.slice(r.pos, r.pos + 2); r.pos += 2; continue; }
    if (c === '"') { r.pos++; return out; }
    if ((c === '$' || c === '%') && r.peek(1) === '{') {
      const start = r.pos;
      r.pos += 2;
      let depth = 1;
      while (!r.eof() && depth > 0) {
        const d = r.peek();
        if (d === '"') { readString(r); continue; }
        if (d === '{') depth++;
        else if (d === '}') depth--;
        r.pos++;
      }
      out += r.text.slice(start, r.pos);
      continue;
    }
    if (c === '\n') return out; // unterminated: stop at the line end
    out += c;
    r.pos++;
  }
  return out;
}

/** Raw expression text up to the end of the value (newline, `,`, or a closing bracket at depth 0). */
function readRaw(r: Reader, start: number): string {
  let depth = 0;
  while (!r.eof()) {
    const c = r.peek();
    if (c === '"') { readString(r); continue; }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') { if (depth === 0) break; depth--; }
    else if ((c === '\n' || c === ',') && depth === 0) break;
    else if (c === '#' || (c === '/' && r.peek(1) === '/')) { if (depth === 0) break; }
    r.pos++;
  }
  return r.text.slice(start, r.pos).trim();
}

function readValue(r: Reader): HclValue {
  r.skip(true);
  const start = r.pos;
  const c = r.peek();
  let v: HclValue;
  if (c === '"') v = { kind: 'string', value: readString(r) };
  else if (c === '<' && r.peek(1) === '<') {
    const m = /^<<-?([A-Za-z_][A-Za-z0-9_]*)[^\n]*\n/.exec(r.text.slice(r.pos, r.pos + 200));
    if (!m) return { kind: 'expr', text: readRaw(r, start) };
    r.pos += m[0].length;
    const end = new RegExp(`^[ \\t]*${m[1]}[ \\t]*$`, 'm');
    const rest = r.text.slice(r.pos);
    const e = end.exec(rest);
    const body = e ? rest.slice(0, e.index) : rest;
    r.pos += e ? e.index + e[0].length : rest.length;
    v = { kind: 'string', value: body };
  } else if (c === '[') {
    r.pos++;
    const items: HclValue[] = [];
    for (;;) {
      r.skip();
      if (r.eof()) break;
      if (r.peek() === ']') { r.pos++; break; }
      if (r.peek() === ',') { r.pos++; continue; }
      const before = r.pos;
      items.push(readValue(r));
      if (r.pos === before) r.pos++;
    }
    v = { kind: 'list', items };
  } else if (c === '{') {
    r.pos++;
    const attrs = new Map<string, HclAttr>();
    for (;;) {
      r.skip();
      if (r.eof()) break;
      if (r.peek() === '}') { r.pos++; break; }
      if (r.peek() === ',') { r.pos++; continue; }
      const at = r.pos;
      const key = r.peek() === '"' ? readString(r) : r.ident();
      r.skip(true);
      if (!key || (r.peek() !== '=' && r.peek() !== ':')) { readRaw(r, at); if (r.pos === at) r.pos++; continue; }
      r.pos++;
      const value = readValue(r);
      const s = r.lineCol(at);
      const e = r.lineCol(r.pos);
      attrs.set(key, { name: key, value, line: s.line, column: s.column, endLine: e.line, endColumn: e.column });
    }
    v = { kind: 'object', attrs };
  } else {
    const raw = readRaw(r, start);
    if (raw === 'true' || raw === 'false') return { kind: 'bool', value: raw === 'true' };
    if (/^-?[0-9]+(\.[0-9]+)?$/.test(raw)) return { kind: 'number', value: Number(raw) };
    return { kind: 'expr', text: raw };
  }
  // A literal followed by an operator (`"a" == var.b ? ...`) is an expression.
  r.skip(true);
  const n = r.peek();
  if (n && n !== '\n' && n !== ',' && n !== ']' && n !== '}' && n !== ')' && n !== '#' && !(n === '/' && r.peek(1) === '/')) {
    return { kind: 'expr', text: readRaw(r, start) };
  }
  return v;
}

function readBody(r: Reader, into: HclBlock): void {
  for (;;) {
    r.skip();
    if (r.eof()) return;
    if (r.peek() === '}') { r.pos++; return; }
    const at = r.pos;
    const name = r.ident();
    if (!name) { r.pos++; continue; }
    r.skip(true);
    if (r.peek() === '=' && r.peek(1) !== '=') {
      r.pos++;
      const value = readValue(r);
      const s = r.lineCol(at);
      const e = r.lineCol(r.pos);
      into.attrs.set(name, { name, value, line: s.line, column: s.column, endLine: e.line, endColumn: e.column });
      continue;
    }
    const labels: string[] = [];
    while (!r.eof() && r.peek() !== '{' && r.peek() !== '\n') {
      if (r.peek() === '"') labels.push(readString(r));
      else { const id = r.ident(); if (id) labels.push(id); else r.pos++; }
      r.skip(true);
    }
    if (r.peek() !== '{') continue; // not a block: skip the line
    r.pos++;
    const s = r.lineCol(at);
    const block: HclBlock = { type: name, labels, attrs: new Map(), blocks: [], line: s.line, column: s.column };
    into.blocks.push(block);
    readBody(r, block);
  }
}

/** The top-level blocks of an HCL file. */
export function parseHcl(text: string): HclBlock[] {
  const root: HclBlock = { type: '', labels: [], attrs: new Map(), blocks: [], line: 1, column: 1 };
  readBody(new Reader(text), root);
  return root.blocks;
}

/** A literal string, number or bool as text; undefined for an expression or a collection. */
export function literal(v: HclValue | undefined): string | undefined {
  if (!v) return undefined;
  if (v.kind === 'string' || v.kind === 'number' || v.kind === 'bool') return String(v.value);
  return undefined;
}

/** The literal strings of a list (or of a single string). */
export function literalList(v: HclValue | undefined): string[] {
  if (!v) return [];
  if (v.kind === 'list') return v.items.map(literal).filter((x): x is string => x !== undefined);
  const one = literal(v);
  return one === undefined ? [] : [one];
}
