/**
 * security-ai static code analysis (ULTRA) of JavaScript and TypeScript: taint from request inputs to
 * sinks and the security pattern rules of server/src/skills/code-analysis (the same analysis review-ai
 * runs on a diff), over whole files. Vendored, minified and generated files are skipped and listed,
 * unless `includeVendored` (input or the configuration's `analysis.include_vendored`).
 */
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { analyzeCode, CODE_ANALYSIS_RULES, VendoredFiles, type VendoredReason } from '../code-analysis/index';
import { isJsTs } from '../review/analyze';
import { RULE_FAMILIES } from '../review/rules';
import type { Finding, RuleInfo } from '../findings/finding';
import { applySuppressions, parseSuppressions } from '../findings/suppressions';

/** The rules security-ai's code check reports (SARIF tool.driver.rules). */
export const CODE_RULES: readonly RuleInfo[] = CODE_ANALYSIS_RULES.map(({ id, severity, family, description, helpUri }) => ({ id, severity, family, description, ...(helpUri ? { helpUri } : {}) }));

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
  /** Vendored, minified or generated files not analyzed, with why. */
  vendored: Array<{ file: string; reason: VendoredReason }>;
}

/** Whether a file is one static code analysis looks at (JS/TS, not a declaration file). */
export function isCodeFile(file: string): boolean {
  return isJsTs(file) && !/\.d\.[cm]?ts$/.test(file);
}

export interface CodeScanOptions {
  signal?: AbortSignal;
  /** Analyze vendored, minified and generated files too. */
  includeVendored?: boolean;
}

/** Analyzes the JS/TS files among `files` (workspace-relative). */
export async function scanCode(ws: string, files: readonly string[], opts: CodeScanOptions | AbortSignal = {}): Promise<CodeScanResult> {
  const { signal, includeVendored = false } = opts instanceof AbortSignal ? { signal: opts } : opts;
  const out: CodeScanResult = { findings: [], suppressed: [], files: [], parseErrors: [], skipped: [], vendored: [] };
  const vendored = includeVendored ? undefined : new VendoredFiles(ws);
  let n = 0;
  for (const file of files) {
    if (!isCodeFile(file)) continue;
    if (++n % 16 === 0) await new Promise<void>((r) => setImmediate(r));
    signal?.throwIfAborted();
    const byPath = vendored?.reason(file);
    if (byPath) {
      out.vendored.push({ file, reason: byPath });
      continue;
    }
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
    const byContent = vendored?.reason(file, text);
    if (byContent) {
      out.vendored.push({ file, reason: byContent });
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

/** One file's code-analysis findings, inline suppressions applied (reason-less directives are the secret scan's to report). */
export function analyzeCodeText(file: string, text: string): { findings: Finding[]; suppressed: CodeScanResult['suppressed']; parseErrors: number } {
  const a = analyzeCode(file, text);
  const directives = parseSuppressions(text);
  if (directives.length === 0) return { findings: a.findings, suppressed: [], parseErrors: a.parseErrors };
  const res = applySuppressions(a.findings, new Map([[file, directives]]), RULE_FAMILIES);
  return { findings: res.kept, suppressed: res.suppressed, parseErrors: a.parseErrors };
}
