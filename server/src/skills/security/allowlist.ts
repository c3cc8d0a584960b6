/** Known example values and placeholder shapes that are never reported as secrets. */
import { shannonEntropy } from './entropy';

/** Documented example credentials (AWS docs, jwt.io). */
export const KNOWN_EXAMPLES: ReadonlySet<string> = new Set([
  'AKIAIOSFODNN7EXAMPLE',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
]);

/** Placeholder shapes: EXAMPLE, xxxx, ****, <...>, ${VAR}, {{var}}, %(var)s, changeme, your_token... */
export const PLACEHOLDER = /example|x{4,}|\*{3,}|\.{3}|<[^>]*>|\$\{|\$[A-Z_]{3,}|\{\{|%\(|change_?me|placeholder|your[_-]?(?:api|secret|token|key|pass|access|own)|dummy|redacted|fake|sample|replace[_-]?me|insert[_-]?here|not[_-]?a[_-]?(?:real|secret)|0123456789|abcdefghij/i;

export interface AllowList {
  /** Exact values or patterns of values never reported. */
  values?: ReadonlyArray<string | RegExp>;
  /** Workspace-relative path patterns never scanned for secrets. */
  paths?: readonly RegExp[];
}

/**
 * True when `value` is an example or placeholder. `body` is the part after a fixed provider prefix
 * (ghp_, AKIA...), whose randomness is judged: fewer than 5 distinct characters or entropy under 2.5
 * bits/char is a placeholder (ghp_aaaa..., AKIA0000...).
 */
export function isAllowed(value: string, body: string = value, allow: AllowList = {}): boolean {
  if (KNOWN_EXAMPLES.has(value)) return true;
  if (PLACEHOLDER.test(value)) return true;
  if (new Set(body).size < 5 || (body.length >= 12 && shannonEntropy(body) < 2.5)) return true;
  for (const a of allow.values ?? []) {
    if (typeof a === 'string' ? a === value : a.test(value)) return true;
  }
  return false;
}
