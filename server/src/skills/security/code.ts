/**
 * security-ai static code analysis (ULTRA): dangerous code patterns in JavaScript and TypeScript.
 * The rules are review-ai's parser-based unsafe-pattern rules (the `security` family of
 * REVIEW_RULES: eval/new Function, shell commands built from strings, SQL built by concatenation,
 * disabled TLS verification), run over whole files; nothing here re-implements them.
 */
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { analyzeJsTs, isJsTs } from '../review/analyze';
import { REVIEW_RULES, RULE_FAMILIES } from '../review/rules';
import type { Finding, RuleInfo } from '../findings/finding';
import { applySuppressions, parseSuppressions } from '../findings/suppressions';

/** review-ai's security rules, the ones security-ai reports. */
export const CODE_RULES: readonly RuleInfo[] = REVIEW_RULES.filter((r) => r.family === 'security');
const CODE_RULE_IDS = new Set(CODE_RULES.map((r) => r.id));

/** JS/TS files larger than this are not parsed (generated bundles). */
export const CODE_MAX_FILE_BYTES = 1024 * 1024;

export interface CodeScanResult {
  findings: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
  /** JS/TS files analyzed. */
  files: string[];
  /** Files parsed with syntax errors (analyzed anyway, on the parser's recovered tree). */
  parseErrors: string[];
  /** Files not analyzed: too large or unreadable. */
  skipped: string[];
}

/** Whether a file is one static code analysis looks at (JS/TS, not a declaration file, not minified by name). */
export function isCodeFile(file: string): boolean {
  return isJsTs(file) && !/\.d\.[cm]?ts$/.test(file) && !/\.min\.[cm]?js$/.test(file);
}

/** Analyzes the JS/TS files among `files` (workspace-relative). */
export async function scanCode(ws: string, files: readonly string[], signal?: AbortSignal): Promise<CodeScanResult> {
  const out: CodeScanResult = { findings: [], suppressed: [], files: [], parseErrors: [], skipped: [] };
  let n = 0;
  for (const file of files) {
    if (!isCodeFile(file)) continue;
    if (++n % 16 === 0) await new Promise<void>((r) => setImmediate(r));
    signal?.throwIfAborted();
    const abs = path.join(ws, file);
    let text: string;
    try {
      if (statSync(abs).size > CODE_MAX_FILE_BYTES) {
        out.skipped.push(file);
        continue;
      }
      text = readFileSync(abs, 'utf8');
    } catch {
      out.skipped.push(file);
      continue;
    }
    const r = analyzeCodeText(file, text);
    out.files.push(file);
    if (r.parseErrors) out.parseErrors.push(file);
    out.findings.push(...r.findings);
    out.suppressed.push(...r.suppressed);
  }
  return out;
}

/** One file's dangerous-pattern findings, inline suppressions applied (reason-less directives are the secret scan's to report). */
export function analyzeCodeText(file: string, text: string): { findings: Finding[]; suppressed: CodeScanResult['suppressed']; parseErrors: number } {
  const a = analyzeJsTs(file, text, null);
  const findings = a.findings.filter((f) => CODE_RULE_IDS.has(f.ruleId));
  const directives = parseSuppressions(text);
  if (directives.length === 0) return { findings, suppressed: [], parseErrors: a.parseErrors };
  const res = applySuppressions(findings, new Map([[file, directives]]), RULE_FAMILIES);
  return { findings: res.kept, suppressed: res.suppressed, parseErrors: a.parseErrors };
}
