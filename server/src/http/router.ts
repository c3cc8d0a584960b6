/**
 * Path router over `{param}` templates: a segment trie where a literal segment wins over a parameter
 * at the same position (`/v1/agents/tasks/{taskId}` before `/v1/agents/{id}/status`), with an exact
 * map in front for parameterless paths. It answers "which value", "which methods are allowed here"
 * (for 405 + Allow) or "nothing here" (404). HEAD falls back to GET.
 */

interface Node<T> {
  literals: Map<string, Node<T>>;
  param: Node<T> | null;
  methods: Map<string, { value: T; paramNames: string[] }>;
}

export type RouteMatch<T> =
  | { kind: 'found'; value: T; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

const NOT_FOUND = { kind: 'not-found' } as const;
const EMPTY: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

function newNode<T>(): Node<T> {
  return { literals: new Map(), param: null, methods: new Map() };
}

/** `/a//b/` → `['a', 'b']`. */
function splitPath(path: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i === path.length || path.charCodeAt(i) === 47 /* / */) {
      if (i > start) out.push(path.slice(start, i));
      start = i + 1;
    }
  }
  return out;
}

function isParam(seg: string): boolean {
  return seg.length > 2 && seg.startsWith('{') && seg.endsWith('}');
}

export class Router<T> {
  private readonly root: Node<T> = newNode();
  /** Parameterless templates by normalised path. */
  private readonly exact = new Map<string, Node<T>>();
  private readonly entries: Array<{ method: string; path: string; value: T }> = [];

  add(method: string, path: string, value: T): this {
    const segs = path.split('/').filter(Boolean);
    let node = this.root;
    const paramNames: string[] = [];
    for (const seg of segs) {
      if (isParam(seg)) {
        paramNames.push(seg.slice(1, -1));
        node = node.param ??= newNode();
      } else {
        let next = node.literals.get(seg);
        if (!next) node.literals.set(seg, (next = newNode()));
        node = next;
      }
    }
    if (node.methods.has(method)) throw new Error(`duplicate route ${method} ${path}`);
    node.methods.set(method, { value, paramNames });
    if (paramNames.length === 0) this.exact.set('/' + segs.join('/'), node);
    this.entries.push({ method, path, value });
    return this;
  }

  /** Every route, in the order added. */
  list(): ReadonlyArray<{ method: string; path: string; value: T }> {
    return this.entries;
  }

  find(method: string, path: string): RouteMatch<T> {
    // Fast path: a parameterless route, exactly as written.
    const exact = this.exact.get(path);
    if (exact) {
      const hit = exact.methods.get(method) ?? (method === 'HEAD' ? exact.methods.get('GET') : undefined);
      if (hit) return { kind: 'found', value: hit.value, params: EMPTY };
    }
    const segs = splitPath(path);
    const values: string[] = [];
    const allow = new Set<string>();
    const found = this.walk(this.root, segs, 0, values, method, allow);
    if (found) return found;
    return allow.size > 0 ? { kind: 'method-not-allowed', allow: [...allow] } : NOT_FOUND;
  }

  /** Depth-first, literals before parameters; the first node holding `method` wins. */
  private walk(node: Node<T>, segs: string[], i: number, values: string[], method: string, allow: Set<string>): RouteMatch<T> | null {
    if (i === segs.length) {
      if (node.methods.size === 0) return null;
      const hit = node.methods.get(method) ?? (method === 'HEAD' ? node.methods.get('GET') : undefined);
      if (hit) {
        const params = Object.create(null) as Record<string, string>;
        for (let k = 0; k < hit.paramNames.length; k++) params[hit.paramNames[k]!] = values[k]!;
        return { kind: 'found', value: hit.value, params };
      }
      for (const m of node.methods.keys()) {
        allow.add(m);
        if (m === 'GET') allow.add('HEAD');
      }
      return null;
    }
    const seg = segs[i]!;
    const literal = node.literals.get(seg);
    if (literal) {
      const r = this.walk(literal, segs, i + 1, values, method, allow);
      if (r) return r;
    }
    if (node.param) {
      let value: string;
      try {
        value = seg.includes('%') ? decodeURIComponent(seg) : seg;
      } catch {
        return null; // a malformed escape matches no parameter
      }
      values.push(value);
      const r = this.walk(node.param, segs, i + 1, values, method, allow);
      values.pop();
      if (r) return r;
    }
    return null;
  }
}
