/** Snippets of code findings: the line, with every secret-shaped value redacted, at most 200 characters. */
import { SECRET_RULES } from '../secret-rules';

let patterns: RegExp[] | undefined;

/** Secrets never leave in a snippet. */
export function redactSnippet(line: string): string {
  patterns ??= SECRET_RULES.map((r) => new RegExp(r.pattern.source, 'g'));
  let out = line;
  for (const re of patterns) { re.lastIndex = 0; out = out.replace(re, '[REDACTED]'); }
  return out.length > 200 ? `${out.slice(0, 200)}…` : out;
}
