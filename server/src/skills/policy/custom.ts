/**
 * Rules from the config (`policy.rules`, validated by config/schema.ts policyRuleSchema): each names
 * the kinds it applies to, a path into the object, an operator and a value. The path is walked on
 * the YAML nodes (not on plain JS) so that a violation has the line of the offending key, or of the
 * deepest key that exists when the path is missing.
 *
 * Path grammar: segments joined by `.`; a segment is a key, `["key.with.dots"]`, followed by any
 * number of `[N]` (index) or `[*]` (every item). `$pod` starts at the pod spec of any workload kind,
 * `$containers` at every container and init container.
 */
import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, type Node as YamlNode } from 'yaml';
import { child, childPath, podTemplatePath, WORKLOAD_KINDS } from '../security/k8s-yaml';
import type { Violation } from './model';
import type { PolicySeverity } from './rules';
import { keyPos, posOf, type ParsedYaml } from './yaml-file';

export interface CustomRule {
  id: string;
  severity: PolicySeverity;
  kinds: string[];
  path: string;
  op: 'equals' | 'not_equals' | 'exists' | 'absent' | 'matches' | 'not_matches' | 'gte' | 'lte' | 'in' | 'not_in';
  value?: unknown;
  message: string;
  fix?: string;
}

type Step = { key: string } | { index: number } | { all: true } | { root: '$pod' | '$containers' };

/** Parses a rule path; throws with the position of what does not fit. */
export function parsePolicyPath(p: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  const fail = (why: string) => { throw new Error(`path "${p}" at character ${i + 1}: ${why}`); };
  if (p.startsWith('$pod') || p.startsWith('$containers')) {
    const root = p.startsWith('$pod') ? '$pod' : '$containers';
    steps.push({ root });
    i = root.length;
    if (i < p.length && p[i] !== '.') fail('expected "." after ' + root);
    if (p[i] === '.') i++;
    if (i >= p.length) return steps;
  }
  while (i < p.length) {
    if (p[i] === '[' && p[i + 1] === '"') {
      const end = p.indexOf('"]', i + 2);
      if (end < 0) fail('unterminated ["...');
      steps.push({ key: p.slice(i + 2, end) });
      i = end + 2;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(p.slice(i));
      if (!m) fail('expected a key');
      steps.push({ key: m![0] });
      i += m![0].length;
    }
    while (p[i] === '[' && p[i + 1] !== '"') {
      const m = /^\[(\*|\d+)\]/.exec(p.slice(i));
      if (!m) fail('expected [N] or [*]');
      steps.push(m![1] === '*' ? { all: true } : { index: Number(m![1]) });
      i += m![0].length;
    }
    if (i < p.length) {
      if (p[i] === '[' && p[i + 1] === '"') continue; // a quoted key follows without a dot: labels["app.kubernetes.io/name"]
      if (p[i] !== '.') fail('expected "."');
      i++;
      if (i >= p.length) fail('a path does not end with "."');
    }
  }
  return steps;
}

/** Where a walk ended: the node found (undefined: missing) and the deepest key that exists on the way. */
interface Hit { node: YamlNode | undefined; at: { line: number; column: number }; container: string | null }

function walk(p: ParsedYaml, start: unknown, startPos: { line: number; column: number }, steps: Step[], container: string | null): Hit[] {
  let cur: Array<{ node: unknown; at: { line: number; column: number } }> = [{ node: start, at: startPos }];
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s]!;
    const next: typeof cur = [];
    for (const c of cur) {
      if (c.node === undefined) { next.push(c); continue; }
      if ('key' in step) {
        const n = child(c.node, step.key);
        next.push({ node: n, at: n !== undefined ? keyPos(p, c.node, step.key) ?? c.at : c.at });
      } else if ('index' in step) {
        const n = isSeq(c.node) ? (c.node.items[step.index] as YamlNode | undefined) : undefined;
        next.push({ node: n, at: posOf(p, n) ?? c.at });
      } else if ('all' in step) {
        // Every item; a missing or empty list has nothing to judge.
        if (isSeq(c.node)) for (const it of c.node.items) next.push({ node: it, at: posOf(p, it as YamlNode) ?? c.at });
      }
    }
    cur = next;
  }
  return cur.map((c) => ({ node: c.node as YamlNode | undefined, at: c.at, container }));
}

function jsOf(node: YamlNode | undefined): unknown {
  if (node === undefined) return undefined;
  return isScalar(node) ? node.value : (node as { toJSON(): unknown }).toJSON();
}

/** Kubernetes quantities and numeric text compare as numbers (replicas "3", cpu "500m" is not numeric: no). */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) return Number(v);
  return undefined;
}

const MAX_MATCH_INPUT = 4096;

/** True when the value satisfies the rule (no violation). */
function satisfied(rule: CustomRule, present: boolean, value: unknown, regex: RegExp | undefined): boolean {
  switch (rule.op) {
    case 'exists': return present;
    case 'absent': return !present;
    case 'equals': return present && isDeepStrictEqual(value, rule.value);
    case 'not_equals': return !present || !isDeepStrictEqual(value, rule.value);
    case 'matches': return present && typeof value !== 'object' && regex!.test(String(value).slice(0, MAX_MATCH_INPUT));
    case 'not_matches': return !present || typeof value === 'object' || !regex!.test(String(value).slice(0, MAX_MATCH_INPUT));
    case 'gte': { const n = asNumber(value); return present && n !== undefined && n >= (rule.value as number); }
    case 'lte': { const n = asNumber(value); return present && n !== undefined && n <= (rule.value as number); }
    case 'in': return present && (rule.value as unknown[]).some((x) => isDeepStrictEqual(x, value));
    case 'not_in': return !present || !(rule.value as unknown[]).some((x) => isDeepStrictEqual(x, value));
  }
}

function describe(rule: CustomRule, present: boolean, value: unknown): string {
  const shown = value === undefined ? '' : JSON.stringify(value).slice(0, 80);
  return present ? `${rule.path} is ${shown}` : `${rule.path} is missing`;
}

export interface CustomTarget {
  p: ParsedYaml;
  root: unknown;
  kind: string;
  name: string | null;
  object: string;
  source: string | null;
}

/** Evaluates config rules against one object (a Kubernetes object or a Compose service). */
export function checkCustom(rules: readonly CustomRule[], t: CustomTarget): Violation[] {
  const out: Violation[] = [];
  const rootPos = keyPos(t.p, t.root, 'kind') ?? posOf(t.p, t.root as YamlNode) ?? { line: 1, column: 1 };
  for (const rule of rules) {
    if (!rule.kinds.includes(t.kind) && !rule.kinds.includes('*')) continue;
    const steps = parsePolicyPath(rule.path);
    const regex = rule.op === 'matches' || rule.op === 'not_matches' ? new RegExp(String(rule.value), 'u') : undefined;
    const first = steps[0];
    let hits: Hit[];
    if (first && 'root' in first) {
      if (!WORKLOAD_KINDS.has(t.kind)) continue;
      const tpl = podTemplatePath(t.kind);
      const spec = childPath(t.root, [...tpl, 'spec']);
      if (!isMap(spec)) continue;
      const specPos = posOf(t.p, spec) ?? rootPos;
      if (first.root === '$pod') hits = walk(t.p, spec, specPos, steps.slice(1), null);
      else {
        hits = [];
        for (const listKey of ['initContainers', 'containers']) {
          const list = child(spec, listKey);
          if (!isSeq(list)) continue;
          for (const c of list.items) {
            const cname = String(jsOf(child(c, 'name')) ?? '?');
            hits.push(...walk(t.p, c, keyPos(t.p, c, 'name') ?? specPos, steps.slice(1), cname));
          }
        }
      }
    } else {
      hits = walk(t.p, t.root, rootPos, steps, null);
    }
    for (const h of hits) {
      const present = h.node !== undefined && !(isScalar(h.node) && h.node.value === null);
      const value = jsOf(h.node);
      if (satisfied(rule, present, value, regex)) continue;
      out.push({
        rule: rule.id, severity: rule.severity, file: t.p.file, line: h.at.line, column: h.at.column,
        object: t.object, kind: t.kind, name: t.name, container: h.container, source: t.source,
        message: `${rule.message} (${describe(rule, present, value)}${h.container ? `, container "${h.container}"` : ''})`,
        fix: rule.fix ?? `make ${rule.path} satisfy ${rule.op}${rule.value !== undefined ? ` ${JSON.stringify(rule.value)}` : ''}`,
        fixable: 'manual', fixNote: 'a configured rule: enforce does not guess the value it wants',
      });
    }
  }
  return out;
}
