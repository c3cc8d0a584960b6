/**
 * security-ai custom rules (ULTRA): user-defined regex rules from a workspace file,
 * `.cadre/rules.yaml` by default (next to `.cadre/advisories.json` and the secrets baseline), or the
 * file named by `input.rules`. Validated with zod; every problem is reported as
 * `<file>:<line>:<col>: <key.path>: <what is wrong>`, like the configuration loader, and a pattern
 * that is not a valid regular expression is one of those problems.
 *
 * ```yaml
 * rules:
 *   - id: no-plain-http
 *     severity: medium            # critical | high | medium | low | info
 *     message: Plain http URL; use https
 *     pattern: 'http://(?!localhost)'
 *     flags: i                    # optional: any of i, m, s, u
 *     files: ['**\/*.ts', '!**\/*.test.ts']   # optional globs; `!` excludes; no slash = any directory
 *     fix: 'https://'             # optional replacement of the match ($1, $&, $$ expand)
 * ```
 * Rule ids are reported as `custom/<id>` (family `custom` for suppressions).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { redact } from '../review/analyze';
import { fingerprint, normalizeLine, SEVERITIES, type Finding, type Range, type RuleInfo, type Severity } from '../findings/finding';
import { applySuppressions, parseSuppressions } from '../findings/suppressions';
import { globToRegExp, isBinary } from './scanner';
import { confinedInputFile } from '../workspace/files';

export const DEFAULT_CUSTOM_RULES_FILE = '.cadre/rules.yaml';
export const CUSTOM_FAMILY = 'custom';
/** Files larger than this are not matched against custom rules. */
export const CUSTOM_MAX_FILE_BYTES = 2 * 1024 * 1024;

const ruleSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit'),
  severity: z.enum(SEVERITIES as unknown as [Severity, ...Severity[]]),
  message: z.string().min(1).max(500),
  pattern: z.string().min(1).max(1000),
  flags: z.string().regex(/^[imsu]*$/, 'may only hold the flags i, m, s, u').optional(),
  files: z.array(z.string().min(1)).optional(),
  fix: z.string().optional(),
  description: z.string().optional(),
}).strict();

const fileSchema = z.object({ rules: z.array(ruleSchema) }).strict();


export type CustomRuleSpec = z.infer<typeof ruleSchema>;

export interface CustomRule extends RuleInfo {
  /** `custom/<id>`. */
  id: string;
  message: string;
  regex: RegExp;
  include: RegExp[];
  exclude: RegExp[];
  fix?: string;
}

export interface CustomRuleIssue { file: string; line: number; col: number; path: string; message: string }

/** An invalid rules file: `message` holds one `file:line:col: path: problem` line per issue. */
export class CustomRulesError extends Error {
  readonly code = 'ERR_CUSTOM_RULES_INVALID';
  constructor(readonly file: string, readonly issues: CustomRuleIssue[]) {
    super(issues.map((i) => `${i.file}:${i.line}:${i.col}: ${i.path ? `${i.path}: ` : ''}${i.message}`).join('\n'));
    this.name = 'CustomRulesError';
  }
}

type KeyPath = Array<string | number>;

function formatPath(p: KeyPath): string {
  return p.reduce<string>((out, seg) => (typeof seg === 'number' ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg), '');
}

/** Offsets of the entry at `p` (key to end of value), or of the deepest existing parent. */
function locate(doc: Document, p: KeyPath): [number, number] {
  let cur: unknown = doc.contents;
  let range: [number, number] = isNode(cur) && cur.range ? [cur.range[0], cur.range[1]] : [0, 0];
  for (const seg of p) {
    if (isMap(cur)) {
      const pair = cur.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
      if (!pair) break;
      const k = isNode(pair.key) && pair.key.range ? pair.key.range : range;
      const v = isNode(pair.value) && pair.value.range ? pair.value.range : undefined;
      range = [k[0], v ? v[1] : k[1]];
      cur = pair.value;
    } else if (isSeq(cur) && typeof seg === 'number') {
      const item = cur.items[seg];
      if (!isNode(item) || !item.range) break;
      range = [item.range[0], item.range[1]];
      cur = item;
    } else {
      break;
    }
  }
  return range;
}

function describe(issue: z.core.$ZodIssue, received: unknown): string {
  if (issue.code === 'invalid_type') return received === undefined ? 'is required' : `must be ${issue.expected === 'array' ? 'a list' : issue.expected === 'object' ? 'a mapping' : `a ${issue.expected}`}`;
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map(String).join(', ')} (got ${JSON.stringify(received)})`;
  if (issue.code === 'unrecognized_keys') return `unknown key(s) ${issue.keys.join(', ')} (allowed: id, severity, message, pattern, flags, files, fix, description)`;
  if (issue.code === 'too_small') return 'must not be empty';
  return issue.message;
}

function valueAt(root: unknown, p: KeyPath): unknown {
  let cur = root;
  for (const seg of p) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[seg] : undefined;
  return cur;
}

function globList(globs: readonly string[] | undefined): { include: RegExp[]; exclude: RegExp[] } {
  const include: RegExp[] = [];
  const exclude: RegExp[] = [];
  for (const g of globs ?? []) {
    const neg = g.startsWith('!');
    const body = (neg ? g.slice(1) : g).replace(/^\.?\//, '');
    // No slash: the base name, in any directory (like .gitignore).
    const re = globToRegExp(body.includes('/') ? body : `**/${body}`);
    (neg ? exclude : include).push(re);
  }
  return { include, exclude };
}

/** Parses and validates a rules file's text. Throws CustomRulesError listing every problem. */
export function parseCustomRules(text: string, fileName: string): CustomRule[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const issue = (range: [number, number], p: KeyPath, message: string): CustomRuleIssue => {
    const pos = lineCounter.linePos(range[0]);
    return { file: fileName, line: Math.max(1, pos.line), col: Math.max(1, pos.col), path: formatPath(p), message };
  };
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new CustomRulesError(fileName, [issue([e.pos[0], e.pos[1]], [], `YAML syntax error: ${e.message.split('\n')[0]}`)]);
  }
  const raw: unknown = doc.toJS({ maxAliasCount: 100 }) ?? {};
  const issues: CustomRuleIssue[] = [];
  const report = (zi: z.core.$ZodIssue, prefix: KeyPath) => {
    const p = [...prefix, ...zi.path.filter((x): x is string | number => typeof x !== 'symbol')];
    issues.push(issue(locate(doc, p), p, describe(zi, valueAt(raw, p))));
  };
  // The file's shape first, then each rule on its own, so that one run reports every problem.
  const shape = fileSchema.safeParse(raw);
  if (!shape.success) for (const zi of shape.error.issues) report(zi, []);
  const list = raw && typeof raw === 'object' && Array.isArray((raw as { rules?: unknown }).rules) ? (raw as { rules: unknown[] }).rules : [];
  const specs: Array<{ spec: CustomRuleSpec; i: number }> = [];
  list.forEach((item, i) => {
    const r = ruleSchema.safeParse(item);
    if (r.success) specs.push({ spec: r.data, i });
  });
  const rules: CustomRule[] = [];
  const seen = new Map<string, number>();
  specs.forEach(({ spec, i }) => {
    const at = (key: string) => locate(doc, ['rules', i, key]);
    if (seen.has(spec.id)) issues.push(issue(at('id'), ['rules', i, 'id'], `duplicate rule id "${spec.id}" (also rules[${seen.get(spec.id)}])`));
    seen.set(spec.id, i);
    let regex: RegExp;
    try {
      regex = new RegExp(spec.pattern, `${spec.flags ?? ''}g`);
    } catch (e) {
      issues.push(issue(at('pattern'), ['rules', i, 'pattern'], `invalid regular expression: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`));
      return;
    }
    if (regex.test('')) {
      issues.push(issue(at('pattern'), ['rules', i, 'pattern'], 'the pattern matches the empty string, so it would match everywhere'));
      return;
    }
    const { include, exclude } = globList(spec.files);
    rules.push({
      id: `custom/${spec.id}`, severity: spec.severity, description: spec.description ?? spec.message, family: CUSTOM_FAMILY,
      message: spec.message, regex, include, exclude, ...(spec.fix !== undefined ? { fix: spec.fix } : {}),
    });
  });
  if (issues.length) throw new CustomRulesError(fileName, issues.sort((a, b) => a.line - b.line || a.col - b.col));
  return rules;
}

/** The rules file a scan uses: `input` (a path relative to the workspace) or the default; undefined when absent. */
export function resolveCustomRulesFile(ws: string, input: unknown): string | undefined {
  // Only a file inside the workspace: an outside path throws InputFileError (path only, never content).
  const file = confinedInputFile(ws, typeof input === 'string' && input ? input : DEFAULT_CUSTOM_RULES_FILE, 'input.rules');
  return file && existsSync(file) ? file : undefined;
}

/** Reads and validates a rules file; messages name it relative to the workspace when inside it. */
export function loadCustomRules(file: string, ws?: string): CustomRule[] {
  const rel = ws && !path.relative(ws, file).startsWith('..') ? path.relative(ws, file).split(path.sep).join('/') : file;
  return parseCustomRules(readFileSync(file, 'utf8'), rel);
}

export function ruleApplies(rule: CustomRule, file: string): boolean {
  if (rule.exclude.some((re) => re.test(file))) return false;
  return rule.include.length === 0 || rule.include.some((re) => re.test(file));
}

/** `$&`, `$1`…`$99` and `$$` in a replacement, from one match. */
export function expandReplacement(template: string, m: RegExpExecArray): string {
  return template.replace(/\$(\$|&|\d{1,2})/g, (all, t: string) => (t === '$' ? '$' : t === '&' ? m[0] : Number(t) < m.length ? (m[Number(t)] ?? '') : all));
}

/** Custom rule findings in one file's text, suppressions applied. */
export function matchCustomRules(rules: readonly CustomRule[], file: string, text: string): { findings: Finding[]; suppressed: Array<{ finding: Finding; reason: string }> } {
  const findings: Finding[] = [];
  let starts: number[] | undefined;
  const lineStarts = () => {
    if (starts) return starts;
    starts = [0];
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    return starts;
  };
  const pos = (offset: number): { line: number; col: number } => {
    const s = lineStarts();
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - s[lo]! + 1 };
  };
  const lineText = (n: number) => {
    const s = lineStarts();
    return text.slice(s[n - 1]!, n < s.length ? s[n]! - 1 : text.length).replace(/\r$/, '');
  };
  for (const rule of rules) {
    if (!ruleApplies(rule, file)) continue;
    const re = rule.regex;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text))) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      const a = pos(m.index);
      const b = pos(m.index + m[0].length);
      const range: Range = { startLine: a.line, startColumn: a.col, endLine: b.line, endColumn: b.col };
      const line = lineText(a.line);
      findings.push({
        ruleId: rule.id, severity: rule.severity, message: rule.message, file, range,
        snippet: redact(line.trim()),
        ...(rule.fix !== undefined ? { fix: { description: `replace with ${JSON.stringify(expandReplacement(rule.fix, m)).slice(0, 80)}`, edits: [{ file, range, newText: expandReplacement(rule.fix, m) }] } } : {}),
        fingerprint: fingerprint(rule.id, file, normalizeLine(line)),
      });
    }
  }
  const directives = findings.length ? parseSuppressions(text) : [];
  if (directives.length === 0) return { findings, suppressed: [] };
  const res = applySuppressions(findings, new Map([[file, directives]]), new Map(rules.map((r) => [r.id, CUSTOM_FAMILY])));
  return { findings: res.kept, suppressed: res.suppressed };
}

/** Applies `rules` to the workspace files they select (text files up to CUSTOM_MAX_FILE_BYTES). */
export async function scanCustomRules(ws: string, files: readonly string[], rules: readonly CustomRule[], signal?: AbortSignal):
  Promise<{ findings: Finding[]; suppressed: Array<{ finding: Finding; reason: string }>; files: number }> {
  const out = { findings: [] as Finding[], suppressed: [] as Array<{ finding: Finding; reason: string }>, files: 0 };
  let n = 0;
  for (const file of files) {
    const applicable = rules.filter((r) => ruleApplies(r, file));
    if (applicable.length === 0) continue;
    if (++n % 64 === 0) await new Promise<void>((r) => setImmediate(r));
    signal?.throwIfAborted();
    let buf: Buffer;
    try {
      const abs = path.join(ws, file);
      if (statSync(abs).size > CUSTOM_MAX_FILE_BYTES) continue;
      buf = readFileSync(abs);
    } catch {
      continue;
    }
    if (isBinary(buf)) continue;
    out.files++;
    const r = matchCustomRules(applicable, file, buf.toString('utf8'));
    out.findings.push(...r.findings);
    out.suppressed.push(...r.suppressed);
  }
  return out;
}
