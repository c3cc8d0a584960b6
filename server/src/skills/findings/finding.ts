/**
 * The one finding type shared by every analyzer (secrets, code patterns, dependencies, IaC...).
 * Positions are 1-based; `endColumn` is exclusive (SARIF convention). Files are workspace-relative
 * with forward slashes.
 */
import { createHash } from 'node:crypto';

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];

export interface Range {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

export interface TextEdit {
  file: string;
  range: Range;
  newText: string;
}

export interface Fix {
  description: string;
  edits: TextEdit[];
}

export interface Finding {
  ruleId: string;
  severity: Severity;
  message: string;
  file: string;
  range: Range;
  /** The matched line with every secret on it redacted; never a full secret. */
  snippet?: string;
  fix?: Fix;
  /** Stable identity used by baselines and SARIF partialFingerprints (see `fingerprint`). */
  fingerprint: string;
}

/** Rule metadata an analyzer publishes (SARIF tool.driver.rules). */
export interface RuleInfo {
  id: string;
  description: string;
  severity: Severity;
  helpUri?: string;
  /** Family used for grouping and precision/recall reporting (e.g. `cloud`, `github`). */
  family?: string;
}

/** 4 = critical ... 0 = info. */
export function severityRank(s: Severity): number {
  return 4 - SEVERITIES.indexOf(s);
}

export function maxSeverity(findings: readonly Finding[]): number {
  return findings.reduce((m, f) => Math.max(m, severityRank(f.severity)), -1);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Fingerprint: sha256 over NUL-joined parts, first 32 hex chars. Secret findings pass
 * (ruleId, file, sha256(secret)); other analyzers pass (ruleId, file, normalizeLine(line)).
 * Neither includes a line number, so moving code does not change it.
 */
export function fingerprint(...parts: string[]): string {
  return sha256(parts.join('\0')).slice(0, 32);
}

/** Line content without whitespace differences, for line-based fingerprints. */
export function normalizeLine(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

/** Forward slashes, no leading `./`. */
export function toWorkspacePath(p: string): string {
  return p.replace(/\\/g, '/').replace(/^\.\//, '');
}

export function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const out: Record<Severity, number> = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  for (const f of findings) out[f.severity]++;
  return out;
}

export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort((a, b) => a.file.localeCompare(b.file) || a.range.startLine - b.range.startLine
    || a.range.startColumn - b.range.startColumn || a.ruleId.localeCompare(b.ruleId));
}
