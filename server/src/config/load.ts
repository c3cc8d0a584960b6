/**
 * Reading the configuration file: lookup (`.cadre.yaml` at the workspace root, else
 * `$CADRE_HOME/config.yaml`, else defaults), YAML parsing with positions, `${VAR}` resolution and
 * the secret rule, schema validation, and error messages of the form
 * `<file>:<line>:<col>: <key.path>: <what is wrong>` (one line per problem, sorted by position).
 */
import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { EngineError } from '../engine/errors';
import { KNOWN_AGENT_IDS } from './agent-ids';
import { resolveEnvironment, type ConfigPath } from './interpolate';
import { cadreConfigSchema, DEFAULT_CONFIG, deepFreeze, type CadreConfig } from './schema';

/** One problem of a configuration file, with 1-based positions (start of the offending entry, end of its value). */
export interface ConfigIssue {
  file: string;
  line: number;
  col: number;
  endLine: number;
  endCol: number;
  /** Dotted key path, e.g. `agents.coder-ai.acmf_mode` or `defaults.policies[0].id`; empty for the file itself. */
  path: string;
  message: string;
}

export type ConfigEnv = Record<string, string | undefined>;

export const WORKSPACE_CONFIG_FILE = '.cadre.yaml';
export const HOME_CONFIG_FILE = 'config.yaml';

export interface LoadConfigOptions {
  /** Workspace root; `.cadre.yaml` there wins over the CADRE_HOME file. */
  workspaceDir?: string;
  /** The data directory (`$CADRE_HOME`, default `~/.cadre`); see `resolveCadreHome`. */
  cadreHome: string;
  env: ConfigEnv;
}

export interface LoadedConfig {
  config: CadreConfig;
  /** Absolute path of the file read, or null when none exists and the defaults apply. */
  source: string | null;
}

/** `$CADRE_HOME` when set and non-empty, else `~/.cadre`. */
export function resolveCadreHome(env: ConfigEnv, homeDir: string = os.homedir()): string {
  const v = env['CADRE_HOME'];
  return v !== undefined && v.trim() !== '' ? path.resolve(v) : path.join(homeDir, '.cadre');
}

/** The files looked at, in order. */
export function configCandidates(opts: Pick<LoadConfigOptions, 'workspaceDir' | 'cadreHome'>): string[] {
  const out: string[] = [];
  if (opts.workspaceDir) out.push(path.resolve(opts.workspaceDir, WORKSPACE_CONFIG_FILE));
  out.push(path.resolve(opts.cadreHome, HOME_CONFIG_FILE));
  return out;
}

/**
 * Finds, reads and validates the configuration. Rejects with `ERR_CONFIG_INVALID` when the file
 * exists but cannot be read or is invalid (it never silently falls back to the next file).
 */
export async function loadConfig(opts: LoadConfigOptions): Promise<LoadedConfig> {
  for (const file of configCandidates(opts)) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw new EngineError('ERR_CONFIG_INVALID', `${file}: cannot read the configuration file: ${(err as Error).message}`, {
        cause: err,
        details: { file, issues: [] },
      });
    }
    return { config: parseConfig(text, file, opts.env), source: file };
  }
  return { config: DEFAULT_CONFIG, source: null };
}

/**
 * Parses and validates the text of a configuration file. Pure: `fileName` is only used in messages
 * and `env` is the only source of `${VAR}` values. Returns a deep-frozen config; throws
 * `EngineError('ERR_CONFIG_INVALID')` whose message lists every problem found and whose
 * `details.issues` holds them as `ConfigIssue`s.
 */
export function parseConfig(text: string, fileName: string, env: ConfigEnv): CadreConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
  const pos = (offset: number): { line: number; col: number } => {
    const p = lineCounter.linePos(offset);
    return { line: Math.max(1, p.line), col: Math.max(1, p.col) };
  };
  const issue = (range: [number, number], keyPath: string, message: string): ConfigIssue => {
    const s = pos(range[0]);
    const e = pos(range[1]);
    return { file: fileName, line: s.line, col: s.col, endLine: e.line, endCol: e.col, path: keyPath, message };
  };

  if (doc.errors.length > 0) {
    // Only the first: the parser's later errors are mostly consequences of it.
    const err = doc.errors[0]!;
    fail(fileName, [issue([err.pos[0], err.pos[1]], '', `YAML syntax error: ${firstLine(err.message)}`)]);
  }

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    fail(fileName, [issue([0, 0], '', `YAML error: ${firstLine((err as Error).message)}`)]);
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    const r = doc.contents && isNode(doc.contents) && doc.contents.range ? doc.contents.range : [0, 0];
    fail(fileName, [issue([r[0], r[1]], '', 'the configuration must be a mapping of sections (agents, integrations, defaults)')]);
  }

  const styleOf = (p: ConfigPath): 'plain' | 'quoted' | 'unknown' => {
    const found = locate(doc, p);
    if (!found.found || !isScalar(found.value)) return 'unknown';
    return found.value.type === 'PLAIN' ? 'plain' : 'quoted';
  };
  const resolved = resolveEnvironment(raw, env, styleOf);
  const issues: ConfigIssue[] = resolved.issues.map((i) => issue(locate(doc, i.path).range, formatPath(i.path), i.message));

  // Validate even when the environment step found problems, so that one run reports everything;
  // paths that the environment step already reported are not reported twice.
  const result = cadreConfigSchema.safeParse(resolved.value);
  if (!result.success) {
    const reported = new Set(issues.map((i) => i.path));
    for (const zi of result.error.issues) {
      const base = zi.path.filter((s): s is string | number => typeof s !== 'symbol');
      const entries: Array<{ p: ConfigPath; message: string }> = zi.code === 'unrecognized_keys'
        ? zi.keys.map((k) => ({ p: [...base, k], message: unknownKeyMessage(base, k) }))
        : [{ p: base, message: describeIssue(zi, valueAt(resolved.value, base)) }];
      for (const e of entries) {
        const keyPath = formatPath(e.p);
        if (reported.has(keyPath)) continue;
        issues.push(issue(locate(doc, e.p).range, keyPath, e.message));
      }
    }
  }
  if (issues.length > 0) fail(fileName, issues);
  return deepFreeze(result.data as CadreConfig);
}

function fail(file: string, issues: ConfigIssue[]): never {
  const sorted = [...issues].sort((a, b) => a.line - b.line || a.col - b.col);
  const lines = sorted.map((i) => `${i.file}:${i.line}:${i.col}: ${i.path ? `${i.path}: ` : ''}${i.message}`);
  throw new EngineError('ERR_CONFIG_INVALID', lines.join('\n'), { details: { file, issues: sorted } });
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').trim();
}

/** `agents.coder-ai.acmf_mode`, `defaults.policies[0].id`. */
export function formatPath(p: ConfigPath): string {
  let out = '';
  for (const seg of p) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// positions

interface Located {
  found: boolean;
  value: unknown;
  /**
   * Offsets to report: for a map entry, from its key to the end of its value; for a sequence item,
   * the item; when the path does not exist (a missing key), the deepest entry that does.
   */
  range: [number, number];
}

function nodeRange(n: unknown): [number, number] | null {
  return isNode(n) && n.range ? [n.range[0], n.range[1]] : null;
}

function locate(doc: Document, p: ConfigPath): Located {
  let cur: unknown = doc.contents;
  let range: [number, number] = nodeRange(cur) ?? [0, 0];
  for (const seg of p) {
    if (isAlias(cur)) cur = cur.resolve(doc);
    if (isMap(cur)) {
      const pair = cur.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
      if (!pair) return { found: false, value: undefined, range };
      const k = nodeRange(pair.key) ?? range;
      const v = nodeRange(pair.value);
      range = [k[0], v ? v[1] : k[1]];
      cur = pair.value;
    } else if (isSeq(cur) && typeof seg === 'number') {
      const item = cur.items[seg];
      const r = nodeRange(item);
      if (!r) return { found: false, value: undefined, range };
      range = r;
      cur = item;
    } else {
      return { found: false, value: undefined, range };
    }
  }
  return { found: true, value: cur, range };
}

function valueAt(root: unknown, p: ConfigPath): unknown {
  let cur = root;
  for (const seg of p) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

// ---------------------------------------------------------------------------------------------
// messages

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

function got(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

function describeIssue(issue: z.core.$ZodIssue, received: unknown): string {
  switch (issue.code) {
    case 'invalid_value': {
      const values = issue.values.map((v) => String(v));
      if (values.length === 1) return `must be ${values[0]} (got ${got(received)})`;
      return `must be one of ${values.join(', ')} (got ${got(received)})`;
    }
    case 'invalid_type':
      if (received === undefined) return 'is required';
      return `must be ${EXPECTED[issue.expected] ?? issue.expected} (got ${got(received)})`;
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'array') return `must have at least ${min} item${min === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return min <= 1 ? 'must not be empty' : `must be at least ${min} characters long`;
      return `must be ${issue.inclusive ? '>=' : '>'} ${min} (got ${got(received)})`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'array') return `must have at most ${max} item${max === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return `must be at most ${max} characters long`;
      return `must be ${issue.inclusive ? '<=' : '<'} ${max} (got ${got(received)})`;
    }
    case 'invalid_format':
      return `${issue.message} (got ${got(received)})`;
    case 'custom':
      return received !== undefined && (typeof received !== 'object' || received === null) && !issue.message.includes('duplicate')
        ? `${issue.message} (got ${got(received)})`
        : issue.message;
    default:
      return issue.message;
  }
}

function unknownKeyMessage(parent: ConfigPath, key: string): string {
  if (parent.length === 1 && parent[0] === 'agents') {
    const near = (KNOWN_AGENT_IDS as readonly string[]).includes(`${key}-ai`) ? `${key}-ai` : closest(key, KNOWN_AGENT_IDS);
    return near
      ? `unknown agent id "${key}" (did you mean "${near}"?)`
      : `unknown agent id "${key}" (known ids: ${KNOWN_AGENT_IDS.join(', ')})`;
  }
  const allowed = keysAt(parent);
  const near = closest(key, allowed);
  if (near) return `unknown key "${key}" (did you mean "${near}"?)`;
  return allowed.length > 0 ? `unknown key "${key}" (allowed: ${allowed.join(', ')})` : `unknown key "${key}"`;
}

/** The keys the schema allows at `p` (for "did you mean"); empty when it cannot tell. */
function keysAt(p: ConfigPath): string[] {
  let s: unknown = cadreConfigSchema;
  const def = (x: unknown): Record<string, unknown> | undefined =>
    (x as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
  const unwrap = (x: unknown): unknown => {
    for (let i = 0; i < 10; i++) {
      const d = def(x);
      if (!d) return x;
      if (d['innerType']) x = d['innerType'];
      else if (d['type'] === 'pipe') x = d['in'];
      else return x;
    }
    return x;
  };
  for (const seg of p) {
    const d = def(unwrap(s));
    if (!d) return [];
    if (d['type'] === 'object') s = (d['shape'] as Record<string, unknown>)[String(seg)];
    else if (d['type'] === 'record') s = d['valueType'];
    else if (d['type'] === 'array') s = d['element'];
    else return [];
  }
  const d = def(unwrap(s));
  return d && d['type'] === 'object' ? Object.keys(d['shape'] as Record<string, unknown>) : [];
}

function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  return bestD <= limit ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
