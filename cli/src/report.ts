/**
 * What an execution found, in lines: each step's summary, then its findings (severity, place, rule,
 * message), most severe first. Read from the execution's `output` (any `findings` arrays in it), so a
 * skill with a new result shape still shows its findings.
 */
import type { Json } from './http-client';

interface Finding {
  severity: string;
  file?: string;
  line?: number;
  ruleId?: string;
  message: string;
}

const RANK: Record<string, number> = { critical: 0, high: 1, medium: 2, moderate: 2, low: 3, info: 4, note: 4 };

/** Every object with a `message` inside a `findings` array, at most a few levels down. */
export function findingsOf(output: unknown): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  const walk = (v: unknown, depth: number, inFindings: boolean) => {
    if (depth > 6 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1, inFindings);
      return;
    }
    const o = v as Json;
    if (inFindings && typeof o['message'] === 'string') {
      const range = o['range'] as Json | undefined;
      const f: Finding = {
        severity: String(o['severity'] ?? o['level'] ?? 'info').toLowerCase(), message: o['message'],
        ...(typeof o['file'] === 'string' ? { file: o['file'] } : {}),
        ...(typeof range?.['startLine'] === 'number' ? { line: range['startLine'] } : typeof o['line'] === 'number' ? { line: o['line'] } : {}),
        ...(typeof o['ruleId'] === 'string' ? { ruleId: o['ruleId'] } : typeof o['rule'] === 'string' ? { ruleId: o['rule'] } : {}),
      };
      const key = `${f.file}:${f.line}:${f.ruleId}:${f.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        out.push(f);
      }
      return;
    }
    for (const [k, x] of Object.entries(o)) walk(x, depth + 1, k === 'findings');
  };
  walk(output, 0, false);
  return out.sort((a, b) => (RANK[a.severity] ?? 5) - (RANK[b.severity] ?? 5));
}

/** The step summaries and up to `max` findings of an execution's output. */
export function reportLines(output: unknown, max = 10): string[] {
  if (!output || typeof output !== 'object') return [];
  const lines: string[] = [];
  for (const s of ((output as Json)['steps'] as Json[] | undefined) ?? []) {
    if (typeof s['summary'] === 'string' && s['summary']) lines.push(`  ${s['agentId']}: ${s['summary']}`);
  }
  if (lines.length === 0 && typeof (output as Json)['summary'] === 'string') lines.push(`  ${(output as Json)['summary']}`);
  const findings = findingsOf(output);
  for (const f of findings.slice(0, max)) {
    const where = f.file ? `${f.file}${f.line ? `:${f.line}` : ''}  ` : '';
    lines.push(`  ${f.severity.padEnd(8)} ${where}${f.ruleId ? `${f.ruleId}: ` : ''}${f.message}`);
  }
  if (findings.length > max) lines.push(`  … ${findings.length - max} more (--json prints all)`);
  return lines;
}
