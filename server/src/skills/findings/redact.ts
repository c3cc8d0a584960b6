/**
 * Redaction of secrets in anything a finding carries out (snippet, message, SARIF, diagnostics).
 * The scanner cuts each secret it reports out by position; `redactSecretsIn` is the second line of
 * defence every output channel applies: whatever still has the shape of a provider token, a URL or
 * connection-string password or a PEM block is cut down to a short prefix and its length, judged by
 * shape only (a placeholder is redacted too; showing it gains nothing).
 */
import { SECRET_RULE_DEFS, type SecretRuleDef } from '../security/rules';

/** Characters of a secret that may be shown (enough to tell ghp_ from AKIA, never enough to use it). */
export const REDACT_KEEP = 4;

/** At most the first 4 characters (a fifth of a short secret), `…`, and the length. */
export function redactSecret(secret: string): string {
  const keep = Math.min(REDACT_KEEP, Math.floor(secret.length / 5));
  return `${secret.slice(0, keep)}…(${secret.length} chars)`;
}

/** A private key block: not even its armour line is shown. */
export function redactPem(length: number): string {
  return `[private key, ${length} chars, redacted]`;
}

export interface Cut { from: number; to: number; text: string }

/** `line` with each [from, to) replaced by its text (overlapping cuts merge into the first). */
export function cutRanges(line: string, cuts: readonly Cut[]): string {
  const sorted = [...cuts].filter((c) => c.to > c.from).sort((a, b) => a.from - b.from);
  let out = '';
  let at = 0;
  for (const c of sorted) {
    if (c.to <= at) continue;
    out += line.slice(at, Math.max(at, c.from)) + (c.from >= at ? c.text : '');
    at = c.to;
  }
  return out + line.slice(at);
}

const MAX_SNIPPET = 200;

/** Snippets stay short; the cut never splits a redaction marker into something that looks like more. */
export function truncateSnippet(s: string): string {
  return s.length > MAX_SNIPPET ? `${s.slice(0, MAX_SNIPPET)}…` : s;
}

interface ShapeRule { re: RegExp; secret?: RegExp; pem: boolean }

let shapes: { combined: RegExp; rules: ShapeRule[] } | undefined;

/** Every rule but the generic one (its shape is a name, not a value), as one global pattern. */
function shapeRules(): { combined: RegExp; rules: ShapeRule[] } {
  if (shapes) return shapes;
  const defs: SecretRuleDef[] = SECRET_RULE_DEFS.filter((r) => r.check !== 'generic');
  shapes = {
    combined: new RegExp(defs.map((r) => `(${r.source})`).join('|'), 'g'),
    rules: defs.map((r) => ({ re: new RegExp(r.source), ...(r.secret ? { secret: new RegExp(r.secret, 'd') } : {}), pem: r.check === 'pem' })),
  };
  return shapes;
}

/**
 * `text` with every secret-shaped value redacted. A PEM header takes everything up to its END line
 * (or the end of the text): a one-line `\n`-escaped key never survives.
 */
export function redactSecretsIn(text: string): string {
  if (!text) return text;
  const { combined, rules } = shapeRules();
  const cuts: Cut[] = [];
  combined.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = combined.exec(text))) {
    let i = 1;
    while (m[i] === undefined) i++;
    const r = rules[i - 1]!;
    if (r.pem) {
      const endIdx = text.indexOf('-----END', m.index + m[0].length);
      const close = endIdx === -1 ? -1 : text.indexOf('-----', endIdx + 8);
      const to = endIdx === -1 ? text.length : close === -1 ? endIdx + 8 : close + 5;
      cuts.push({ from: m.index, to, text: redactPem(to - m.index) });
      combined.lastIndex = to;
      continue;
    }
    if (r.secret) {
      const sm = r.secret.exec(m[0]);
      if (sm?.[1] !== undefined) {
        if (sm[1].includes('…(')) continue; // already redacted
        const from = m.index + sm.indices![1]![0];
        cuts.push({ from, to: from + sm[1].length, text: redactSecret(sm[1]) });
        continue;
      }
    }
    if (!m[0].includes('…(')) cuts.push({ from: m.index, to: m.index + m[0].length, text: redactSecret(m[0]) });
  }
  return cuts.length ? cutRanges(text, cuts) : text;
}
