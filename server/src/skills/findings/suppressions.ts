/**
 * Inline suppressions: `cadre-ignore <rule>: <why>` in a comment on the finding's line or the line
 * before it. `<rule>` is a rule id, a rule family, or `*`. A directive without a reason suppresses
 * nothing and is itself reported as an info finding.
 */
import { fingerprint, normalizeLine, type Finding } from './finding';

export interface Suppression {
  /** 1-based line of the directive. */
  line: number;
  column: number;
  rule: string;
  /** Empty when missing (the directive is then invalid). */
  reason: string;
}

export const SUPPRESSION_WITHOUT_REASON = 'cadre/suppression-without-reason';

const DIRECTIVE = /cadre-ignore[ \t]+([A-Za-z0-9_.*\/-]+)[ \t]*(?::([^\n]*))?/g;

/** Directives in `text` (cheap when there is none). */
export function parseSuppressions(text: string): Suppression[] {
  if (!text.includes('cadre-ignore')) return [];
  const out: Suppression[] = [];
  DIRECTIVE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = DIRECTIVE.exec(text))) {
    const before = text.lastIndexOf('\n', m.index - 1);
    const line = countLines(text, m.index);
    const reason = (m[2] ?? '').replace(/(\*\/|-->|#\}|%>)\s*$/, '').trim();
    out.push({ line, column: m.index - before, rule: m[1]!, reason });
  }
  return out;
}

function countLines(text: string, end: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

export interface SuppressionResult {
  kept: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
  /** One info finding per directive that has no reason. */
  invalid: Finding[];
}

/**
 * Applies the directives of each file. `directives` maps a workspace-relative file to its parsed
 * directives; `families` maps a rule id to its family (optional).
 */
export function applySuppressions(
  findings: readonly Finding[],
  directives: ReadonlyMap<string, readonly Suppression[]>,
  families: ReadonlyMap<string, string> = new Map(),
): SuppressionResult {
  const kept: Finding[] = [];
  const suppressed: SuppressionResult['suppressed'] = [];
  for (const f of findings) {
    const list = directives.get(f.file) ?? [];
    const hit = list.find((s) => s.reason !== '' && (s.line === f.range.startLine || s.line === f.range.startLine - 1)
      && (s.rule === '*' || s.rule === f.ruleId || s.rule === families.get(f.ruleId)));
    if (hit) suppressed.push({ finding: f, reason: hit.reason });
    else kept.push(f);
  }
  const invalid: Finding[] = [];
  for (const [file, list] of directives) {
    for (const s of list) {
      if (s.reason !== '') continue;
      invalid.push({
        ruleId: SUPPRESSION_WITHOUT_REASON,
        severity: 'info',
        message: `suppression without a reason: write "cadre-ignore ${s.rule}: <why>"; nothing is suppressed`,
        file,
        range: { startLine: s.line, startColumn: s.column, endLine: s.line, endColumn: s.column + 'cadre-ignore'.length },
        fingerprint: fingerprint(SUPPRESSION_WITHOUT_REASON, file, normalizeLine(`cadre-ignore ${s.rule}`)),
      });
    }
  }
  return { kept, suppressed, invalid };
}
