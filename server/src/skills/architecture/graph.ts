/**
 * architect-ai `validate`: the real module import graph of JS/TS and Python files (relative imports
 * and workspace modules resolved, packages ignored), cycles (Tarjan SCC), layering violations against
 * ordered folder globs, and god modules (fan-in + fan-out, or file length, over a threshold).
 */
import * as path from 'node:path';
import { fingerprint, sortFindings, type Finding, type Range } from '../findings/finding';
import { listWorkspaceFiles } from '../debug/analyze';
import { WorkspaceFiles } from '../workspace/files';

export const JS_EXTS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
const PY_EXT = '.py';

export interface ImportEdge {
  from: string;
  to: string;
  /** 1-based line of the import statement in `from`. */
  line: number;
  specifier: string;
}

export interface ImportGraph {
  /** Workspace-relative module paths, sorted. */
  modules: string[];
  edges: ImportEdge[];
  /** Adjacency (distinct targets). */
  out: Map<string, Set<string>>;
  in: Map<string, Set<string>>;
  lines: Map<string, number>;
  /** Relative / workspace imports that resolved vs. relative imports that did not (packages are not counted). */
  resolved: number;
  unresolved: Array<{ from: string; specifier: string; line: number }>;
}

function isModule(f: string): boolean {
  const ext = path.extname(f).toLowerCase();
  return (JS_EXTS.includes(ext) && !f.endsWith('.d.ts')) || ext === PY_EXT;
}

/** Blanks comments (keeping line breaks and string contents) so commented-out imports do not count. */
function stripJsComments(text: string): string {
  let out = '';
  let i = 0;
  let quote: string | null = null;
  while (i < text.length) {
    const c = text[i]!;
    const n = text[i + 1];
    if (quote) {
      out += c;
      if (c === '\\') { out += n ?? ''; i += 2; continue; }
      if (c === quote || (c === '\n' && quote !== '`')) quote = null;
      i++;
      continue;
    }
    if (c === '/' && n === '/') { while (i < text.length && text[i] !== '\n') i++; continue; }
    if (c === '/' && n === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    out += c;
    i++;
  }
  return out;
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** JS/TS import specifiers with their lines. */
export function jsImports(text: string): Array<{ spec: string; line: number }> {
  const clean = stripJsComments(text);
  const re = /\b(?:import|export)\s+(?:type\s+)?(?:[\w*${}\s,]+?\s+from\s+)?['"]([^'"\n]+)['"]|\brequire\s*\(\s*['"]([^'"\n]+)['"]\s*\)|\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;
  const out: Array<{ spec: string; line: number }> = [];
  let m: RegExpExecArray | null;
  while ((m = re.exec(clean))) out.push({ spec: (m[1] ?? m[2] ?? m[3])!, line: lineAt(clean, m.index) });
  return out;
}

/** Python imports: `import a.b, c as d` and `from .x import y, z`. */
export function pyImports(text: string): Array<{ module: string; names: string[]; line: number }> {
  const out: Array<{ module: string; names: string[]; line: number }> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.replace(/#.*$/, '').trim();
    let m = /^import\s+(.+)$/.exec(l);
    if (m) {
      for (const part of m[1]!.split(',')) {
        const mod = part.trim().split(/\s+as\s+/)[0]!.trim();
        if (/^[\w.]+$/.test(mod)) out.push({ module: mod, names: [], line: i + 1 });
      }
      continue;
    }
    m = /^from\s+(\.*[\w.]*)\s+import\s+\(?([^)]*)\)?/.exec(l);
    if (m) {
      const names = m[2]!.split(',').map((s) => s.trim().split(/\s+as\s+/)[0]!.trim()).filter((s) => /^\w+$/.test(s));
      out.push({ module: m[1]!, names, line: i + 1 });
    }
  }
  return out;
}

function resolveJs(from: string, spec: string, files: Set<string>): string | undefined {
  if (!spec.startsWith('.') && !spec.startsWith('/')) return undefined;
  const base = spec.startsWith('/') ? spec.slice(1) : path.posix.join(path.posix.dirname(from), spec);
  const cands = [base, ...JS_EXTS.map((e) => base + e), ...JS_EXTS.map((e) => `${base}/index${e}`)];
  // TypeScript ESM style: './x.js' names './x.ts'.
  const js = /\.(m|c)?jsx?$/.exec(base);
  if (js) {
    const stem = base.slice(0, -js[0].length);
    cands.push(...['.ts', '.tsx', '.mts', '.cts'].map((e) => stem + e));
  }
  return cands.find((c) => files.has(c) && isModule(c));
}

function pyCandidates(dir: string, dotted: string): string[] {
  const rel = dotted.split('.').filter(Boolean).join('/');
  const p = dir ? (rel ? `${dir}/${rel}` : dir) : rel;
  return p ? [`${p}.py`, `${p}/__init__.py`] : [];
}

function resolvePy(from: string, module: string, names: string[], files: Set<string>, roots: string[]): string[] {
  const dots = /^\.*/.exec(module)![0].length;
  const rest = module.slice(dots);
  let bases: string[];
  if (dots > 0) {
    let dir = path.posix.dirname(from);
    for (let i = 1; i < dots; i++) dir = path.posix.dirname(dir);
    bases = [dir === '.' ? '' : dir];
  } else bases = roots;
  const found = new Set<string>();
  for (const b of bases) {
    // `from pkg import mod`: each name may itself be a submodule.
    let viaNames = false;
    for (const n of names) {
      const hit = pyCandidates(b, rest ? `${rest}.${n}` : n).find((c) => files.has(c));
      if (hit) { found.add(hit); viaNames = true; }
    }
    const hit = pyCandidates(b, rest).find((c) => files.has(c));
    if (hit && (!viaNames || !hit.endsWith('__init__.py'))) found.add(hit);
    if (found.size) break;
  }
  return [...found];
}

export interface GraphOptions {
  files?: readonly string[];
}

export function buildImportGraph(workspace: string, options: GraphOptions = {}): ImportGraph {
  const all = options.files ?? listWorkspaceFiles(workspace);
  const files = new Set(all);
  const modules = all.filter(isModule).sort();
  const pyRoots = ['', ...['src', 'lib', 'app'].filter((r) => all.some((f) => f.startsWith(`${r}/`) && f.endsWith('.py')))];
  const g: ImportGraph = { modules, edges: [], out: new Map(), in: new Map(), lines: new Map(), resolved: 0, unresolved: [] };
  for (const m of modules) { g.out.set(m, new Set()); g.in.set(m, new Set()); }
  const confined = new WorkspaceFiles(workspace);
  for (const m of modules) {
    // Inside the workspace only: a module that is a symlink out is not read.
    const r = confined.readText(m);
    if (!r.ok) continue;
    const text = r.text;
    g.lines.set(m, text.length ? text.split(/\r?\n/).length - (text.endsWith('\n') ? 1 : 0) : 0);
    const add = (to: string, line: number, specifier: string) => {
      g.resolved++;
      g.edges.push({ from: m, to, line, specifier });
      g.out.get(m)!.add(to);
      g.in.get(to)!.add(m);
    };
    if (m.endsWith(PY_EXT)) {
      for (const imp of pyImports(text)) {
        const targets = resolvePy(m, imp.module, imp.names, files, pyRoots);
        for (const t of targets) add(t, imp.line, imp.module);
        if (!targets.length && imp.module.startsWith('.')) g.unresolved.push({ from: m, specifier: imp.module, line: imp.line });
      }
    } else {
      for (const imp of jsImports(text)) {
        const t = resolveJs(m, imp.spec, files);
        if (t) add(t, imp.line, imp.spec);
        else if (imp.spec.startsWith('.')) g.unresolved.push({ from: m, specifier: imp.spec, line: imp.line });
      }
    }
  }
  return g;
}

/** Tarjan's strongly connected components (iterative), each sorted, in discovery order. */
export function stronglyConnected(nodes: readonly string[], out: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const result: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; it: Iterator<string> }> = [];
    const visit = (v: string) => {
      index.set(v, counter); low.set(v, counter); counter++;
      stack.push(v); onStack.add(v);
      work.push({ v, it: [...(out.get(v) ?? [])].sort()[Symbol.iterator]() });
    };
    visit(root);
    while (work.length) {
      const top = work[work.length - 1]!;
      const n = top.it.next();
      if (!n.done) {
        const w = n.value;
        if (!index.has(w)) visit(w);
        else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) { const p = work[work.length - 1]!.v; low.set(p, Math.min(low.get(p)!, low.get(top.v)!)); }
      if (low.get(top.v) === index.get(top.v)) {
        const comp: string[] = [];
        let w: string;
        do { w = stack.pop()!; onStack.delete(w); comp.push(w); } while (w !== top.v);
        result.push(comp.sort());
      }
    }
  }
  return result;
}

/** A shortest cycle through the first member of an SCC (BFS inside the component), closed: [a, b, a]. */
export function cycleOf(scc: readonly string[], out: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const members = new Set(scc);
  const start = scc[0]!;
  if (scc.length === 1) return [start, start];
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of [...(out.get(v) ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const pathBack = [v];
        let c = v;
        while (c !== start) { c = prev.get(c)!; pathBack.push(c); }
        return [...pathBack.reverse(), start];
      }
      if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
    }
  }
  return [start, start];
}

/** Glob over workspace paths: `**` any depth, `*` within a segment, `?` one character. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  const g = glob.replace(/\\/g, '/').replace(/^\.\//, '');
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === '*' && g[i + 1] === '*') {
      if (g[i + 2] === '/') { re += '(?:.*/)?'; i += 2; } else { re += '.*'; i++; }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A bare folder (`src/ui`) covers what is under it.
  if (!/[*?]/.test(g)) re += '(?:/.*)?';
  return new RegExp(`^${re}$`);
}

export interface LayerViolation {
  from: string;
  to: string;
  line: number;
  fromLayer: string;
  toLayer: string;
}

/** Layers ordered top (index 0) to bottom: a module may import its own layer or lower ones only. */
export function layeringViolations(g: ImportGraph, layers: readonly string[]): LayerViolation[] {
  const res = layers.map(globToRegExp);
  const layerOf = (f: string) => res.findIndex((r) => r.test(f));
  const out: LayerViolation[] = [];
  for (const e of g.edges) {
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (a >= 0 && b >= 0 && b < a) out.push({ from: e.from, to: e.to, line: e.line, fromLayer: layers[a]!, toLayer: layers[b]! });
  }
  return out;
}

export interface GodModule {
  module: string;
  fanIn: number;
  fanOut: number;
  lines: number;
  reasons: string[];
}

export interface GodModuleOptions {
  /** fan-in + fan-out strictly above this flags a module (default 15). */
  couplingThreshold?: number;
  /** More lines than this flags a module (default 500). */
  maxLines?: number;
}

export function godModules(g: ImportGraph, o: GodModuleOptions = {}): GodModule[] {
  const threshold = o.couplingThreshold ?? 15;
  const maxLines = o.maxLines ?? 500;
  const out: GodModule[] = [];
  for (const m of g.modules) {
    const fanIn = g.in.get(m)?.size ?? 0;
    const fanOut = g.out.get(m)?.size ?? 0;
    const lines = g.lines.get(m) ?? 0;
    const reasons: string[] = [];
    if (fanIn + fanOut > threshold) reasons.push(`fan-in ${fanIn} + fan-out ${fanOut} = ${fanIn + fanOut} > ${threshold}`);
    if (lines > maxLines) reasons.push(`${lines} lines > ${maxLines}`);
    if (reasons.length) out.push({ module: m, fanIn, fanOut, lines, reasons });
  }
  return out;
}

export interface ArchitectureValidation {
  modules: number;
  edges: number;
  resolvedImports: number;
  unresolvedRelativeImports: Array<{ from: string; specifier: string; line: number }>;
  /** Each SCC of more than one module (or a self-import) with one concrete cycle through it. */
  cycles: Array<{ members: string[]; cycle: string[] }>;
  layers: string[];
  layeringNote: string;
  layeringViolations: LayerViolation[];
  godModules: GodModule[];
  thresholds: { couplingThreshold: number; maxLines: number };
  findings: Finding[];
}

function lineRange(line: number): Range {
  return { startLine: line, startColumn: 1, endLine: line, endColumn: 1 };
}

export function validateArchitecture(workspace: string, input: { layers?: readonly string[] } & GodModuleOptions = {}, graph?: ImportGraph): ArchitectureValidation {
  const g = graph ?? buildImportGraph(workspace);
  const thresholds = { couplingThreshold: input.couplingThreshold ?? 15, maxLines: input.maxLines ?? 500 };
  const findings: Finding[] = [];
  const edgeLine = (a: string, b: string) => g.edges.find((e) => e.from === a && e.to === b)?.line ?? 1;
  const cycles = stronglyConnected(g.modules, g.out)
    .filter((c) => c.length > 1 || g.out.get(c[0]!)?.has(c[0]!))
    .map((members) => ({ members, cycle: cycleOf(members, g.out) }));
  for (const c of cycles) {
    const file = c.cycle[0]!;
    findings.push({
      ruleId: 'arch/cycle', severity: 'medium', file, range: lineRange(edgeLine(file, c.cycle[1]!)),
      message: `Import cycle: ${c.cycle.join(' -> ')}${c.members.length > c.cycle.length - 1 ? ` (strongly connected component of ${c.members.length} modules: ${c.members.join(', ')})` : ''}`,
      fingerprint: fingerprint('arch/cycle', file, c.members.join('|')),
    });
  }
  const layers = [...(input.layers ?? [])];
  const violations = layers.length ? layeringViolations(g, layers) : [];
  for (const v of violations) {
    findings.push({
      ruleId: 'arch/layering', severity: 'medium', file: v.from, range: lineRange(v.line),
      message: `Layering violation: ${v.from} (layer ${v.fromLayer}) imports ${v.to} (higher layer ${v.toLayer})`,
      fingerprint: fingerprint('arch/layering', v.from, v.to),
    });
  }
  const gods = godModules(g, thresholds);
  for (const m of gods) {
    findings.push({
      ruleId: 'arch/god-module', severity: 'low', file: m.module, range: lineRange(1),
      message: `God module: ${m.reasons.join('; ')}`,
      fingerprint: fingerprint('arch/god-module', m.module, 'god-module'),
    });
  }
  return {
    modules: g.modules.length,
    edges: g.edges.length,
    resolvedImports: g.resolved,
    unresolvedRelativeImports: g.unresolved,
    cycles,
    layers,
    layeringNote: layers.length ? `${layers.length} layers checked, top to bottom: ${layers.join(' > ')}` : 'no layers given (input.layers): layering not checked',
    layeringViolations: violations,
    godModules: gods,
    thresholds,
    findings: sortFindings(findings),
  };
}
