/** Helpers shared by the IaC checks (Dockerfile, Kubernetes, Terraform). */
import type { Range, RuleInfo, Severity } from '../findings/finding';
import { ruleHelpUri } from '../findings/rule-docs';

/** What a snippet shows instead of a value that may be secret. */
export const REDACTED = '<redacted>';

/** An IaC rule with its docs anchor as help link. */
export function iacRule(id: string, severity: Severity, family: string, description: string): RuleInfo {
  return { id, severity, family, description, helpUri: ruleHelpUri(id) };
}

/**
 * Names that hold secrets: PASSWORD, PASSWD, SECRET, TOKEN anywhere; KEY as a `_`-separated word
 * (API_KEY, KEY). Not names that say the value is something else: a file or path to the secret
 * (`*_FILE`, `*_PATH`, `*_DIR`), a size (`*_KEY_SIZE`, `*_LENGTH`, `*_BITS`), a public fingerprint
 * or key id (`GPG_KEY`, `*_FINGERPRINT`, `*_KEY_ID`, `PUBLIC_KEY`), a name, type or URL of one.
 */
export function isSecretName(name: string): boolean {
  const n = name.toUpperCase();
  if (/(^|_)(FILE|PATH|DIR|SIZE|LENGTH|LEN|BITS|TYPE|NAME|ALGORITHM|ALG|URL|URI|ID|FINGERPRINT|FINGERPRINTS|TTL|EXPIRY|EXPIRATION|HEADER|FIELD|REF|VERSION)$/.test(n)) return false;
  if (/(^|_)(GPG|PGP|PUBLIC|PUB)(_|$)/.test(n) || /KEYSERVER|KEYRING/.test(n)) return false;
  return /PASSWORD|PASSWD|SECRET|TOKEN/.test(n) || /(^|_)(API|ACCESS|PRIVATE|SECRET|AUTH)?KEY(_|$)/.test(n);
}

export function lineRange(lines: readonly string[], line: number, startColumn = 1, endColumn?: number): Range {
  const text = lines[line - 1] ?? '';
  return { startLine: line, startColumn, endLine: line, endColumn: endColumn ?? text.length + 1 };
}

/** Splits an image reference into name, tag and digest. */
export function parseImageRef(ref: string): { name: string; tag?: string; digest?: string } {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) return { name: rest.slice(0, colon), tag: rest.slice(colon + 1), ...(digest ? { digest } : {}) };
  return { name: rest, ...(digest ? { digest } : {}) };
}

/** `latest` or no tag, and no digest. */
export function isUnpinnedImage(ref: string): boolean {
  const r = parseImageRef(ref);
  if (r.digest) return false;
  return r.tag === undefined || r.tag === 'latest';
}
