/**
 * The secret scanner: one combined regex pass per file (every rule is an alternative of a single
 * RegExp, so each file is read once), then per-rule validation (allow-list, placeholder shapes,
 * entropy, JWT header, PEM body), inline suppressions and redacted snippets.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fingerprint, sha256, sortFindings, toWorkspacePath, type Finding, type Fix, type Range, type Severity } from '../findings/finding';
import { cutRanges, redactPem, redactSecret, redactSecretsIn, truncateSnippet } from '../findings/redact';
import { applySuppressions, parseSuppressions } from '../findings/suppressions';
import { isAllowed, PLACEHOLDER, type AllowList } from './allowlist';
import { passesEntropy, shannonEntropy } from './entropy';
import { SECRET_RULE_DEFS, type SecretRuleDef } from './rules';
import { scanTreeParallel } from './scan-pool';
import { WorkspaceFiles } from '../workspace/files';

export interface ScanOptions {
  rules?: readonly SecretRuleDef[];
  allow?: AllowList;
  /** Files larger than this are skipped (default 5 MiB). */
  maxFileBytes?: number;
  /** Directory names never entered (default DEFAULT_SKIP_DIRS). */
  skipDirs?: readonly string[];
  /** Honour the root .gitignore (simple patterns only; default true). */
  gitignore?: boolean;
  /** Honour `cadre-ignore` directives (default true). */
  suppressions?: boolean;
  signal?: AbortSignal;
}

export const DEFAULT_SKIP_DIRS: readonly string[] = ['node_modules', '.git', '.hg', '.svn', 'dist', 'build', 'coverage', '.next', '.cache', '__pycache__', '.venv', 'venv', 'target'];
export const DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024;

export interface TextScanResult {
  findings: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
}

const combinedCache = new WeakMap<readonly SecretRuleDef[], RegExp>();
const singleCache = new WeakMap<readonly SecretRuleDef[], RegExp>();

/** All rules as one global RegExp; capture group i + 1 is rule i. */
export function combinedPattern(rules: readonly SecretRuleDef[] = SECRET_RULE_DEFS): RegExp {
  let re = combinedCache.get(rules);
  if (!re) {
    re = new RegExp(rules.map((r) => `(${r.source})`).join('|'), 'g');
    combinedCache.set(rules, re);
  }
  return re;
}

/** The provider rules (a fixed-format token, no context), to keep generic and context rules from double-reporting. */
function specificPattern(rules: readonly SecretRuleDef[]): RegExp {
  let re = singleCache.get(rules);
  if (!re) {
    // Context rules need their name or URL around the value, so a bare value never matches them.
    const specific = rules.filter((r) => r.check !== 'generic');
    re = specific.length ? new RegExp(specific.map((r) => `(?:${r.source})`).join('|')) : /(?!)/;
    singleCache.set(rules, re);
  }
  return re;
}

const CODE_EXT = new Set(['.js', '.jsx', '.ts', '.tsx', '.mjs', '.cjs', '.mts', '.cts', '.py', '.go', '.java', '.rb', '.rs', '.c', '.cc', '.cpp', '.h', '.cs', '.php', '.kt', '.swift', '.scala']);
const JS_EXT = new Set(['.js', '.jsx', '.ts', '.tsx', '.mjs', '.cjs', '.mts', '.cts']);
const SECRET_WORDS = new Set(['key', 'secret', 'token', 'password', 'passwd', 'pwd', 'pass', 'credential', 'credentials', 'apikey', 'secretkey', 'accesskey', 'authtoken', 'privatekey', 'pat']);
const PASSWORD_WORDS = new Set(['password', 'passwd', 'pwd', 'pass']);
/** Name words that say the value is not itself a secret (a size, a path, a public half, an id). */
const NOT_SECRET_WORDS = new Set(['public', 'pub', 'size', 'length', 'len', 'file', 'path', 'dir', 'url', 'uri', 'id', 'name', 'type', 'hash', 'hasher', 'hashers', 'fingerprint', 'policy', 'prompt', 'field', 'label', 'header',
  // Keys that index data, not credentials: cacheKey, primaryKey, sortKey, partitionKey, idempotencyKey...
  'cache', 'primary', 'sort', 'partition', 'foreign', 'idempotency', 'lookup', 'dedup', 'dedupe', 'index', 'row', 'column', 'cursor', 'i18n', 'translation']);
const NAME_CHAR = /[A-Za-z0-9_.-]/;
const GENERIC_DETAIL = /^([A-Za-z0-9_.-]*)(["']?)[ \t]*(?:=|:=|:|=>)[ \t]*(["'`]?)([A-Za-z0-9+/=_.~@#$%^&*!-]+)/;

/** Files whose secrets are test data: still reported, one severity level lower. */
const TEST_PATH = /(^|\/)(test|tests|__tests__|spec|specs|fixtures?|__fixtures__|testdata|mocks?|__mocks__)\/|\.(test|spec)\.[A-Za-z]+$/;

/** Values well known as defaults or examples: never a leaked credential on their own. */
const DEFAULT_PASSWORDS = new Set(['password', 'passwd', 'pass', 'secret', 'root', 'admin', 'guest', 'test', 'testing', 'postgres', 'mysql', 'mariadb', 'mongo', 'mongodb',
  'redis', 'rabbitmq', 'user', 'username', 'changeme', 'changeit', 'example', 'demo', 'default', 'pwd', 'letmein', 'foobar', 'sa', 'dev', 'development', 'local', 'none', 'null', 'xxx']);

export function isEnvFile(file: string): boolean {
  const base = file.slice(file.lastIndexOf('/') + 1).toLowerCase();
  return base === '.env' || base.startsWith('.env.') || base.endsWith('.env') || base === '.envrc';
}

function words(identifier: string): string[] {
  const last = identifier.split('.').filter(Boolean).pop() ?? '';
  return last.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[_-]+/).filter(Boolean);
}

function envNameOf(identifier: string): string {
  return identifier.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').toUpperCase() || 'SECRET';
}

interface Candidate {
  start: number;
  end: number;
  /** The secret itself (hashed for the fingerprint, redacted in snippets). */
  secret: string;
  envName: string;
}

function validateGeneric(text: string, at: string, index: number, file: string, rules: readonly SecretRuleDef[], allow: AllowList | undefined): { cand: Candidate | null; resume: number } {
  const kw = /^[A-Za-z]+/.exec(at)![0];
  const d = GENERIC_DETAIL.exec(at.slice(kw.length))!;
  const nameTail = d[1]!;
  const quote = d[3]!;
  let value = d[4]!;
  const valueStart = index + kw.length + d[0].length - value.length;
  const resume = valueStart;
  // Cheap rejections first (each test is independent of the others).
  if (quote) {
    if (text[valueStart + value.length] !== quote) return { cand: null, resume };
  } else {
    if (CODE_EXT.has(path.extname(file).toLowerCase())) return { cand: null, resume };
    // An unquoted value in .env, YAML, properties... ends at white space; `#` after a space is a comment.
    if (value.startsWith('$')) return { cand: null, resume };
    if (!isEnvFile(file) && !/^[A-Za-z0-9+/=_.~@#%^&*!-]+$/.test(value)) return { cand: null, resume };
    const after = text[valueStart + value.length];
    if (after !== undefined && !/[\s;,]/.test(after)) return { cand: null, resume };
    if (/[.,;]$/.test(value) && !isEnvFile(file)) value = value.replace(/[.,;]+$/, '');
  }
  const valueEnd = valueStart + value.length;
  let j = index;
  while (j > 0 && NAME_CHAR.test(text[j - 1]!)) j--;
  const identifier = text.slice(j, index) + kw + nameTail;
  const w = words(identifier);
  const lastWord = w[w.length - 1] ?? '';
  if (!SECRET_WORDS.has(lastWord) || w.some((x) => NOT_SECRET_WORDS.has(x))) return { cand: null, resume };
  const passwordLike = PASSWORD_WORDS.has(lastWord);
  // A password needs a digit or a symbol, or (a generated one) 16+ characters of mixed case.
  const mixedLong = value.length >= 16 && /[a-z]/.test(value) && /[A-Z]/.test(value);
  if (passwordLike ? !(/[0-9]|[^A-Za-z0-9]/.test(value) || mixedLong) : !/[0-9]/.test(value)) return { cand: null, resume };
  if (!passesEntropy(value, passwordLike) || isAllowed(value, value, allow) || looksLikeDigest(value)) return { cand: null, resume };
  if (specificPattern(rules).test(value) || specificPattern(SECRET_RULE_DEFS).test(value)) return { cand: null, resume };
  return { cand: { start: valueStart, end: valueEnd, secret: value, envName: envNameOf(identifier) }, resume };
}

/**
 * Lock-file integrity (sha512-…), a bare hex digest, a UUID, a Cadre API key's id (`key_` + 12 hex: shown
 * in key lists and in audit actors such as `key:key_3f…`, never the key itself): identifiers, not secrets.
 */
function looksLikeDigest(value: string): boolean {
  return /^sha(?:1|256|384|512)-[A-Za-z0-9+/]+=*$/.test(value) || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
    || /^key_[0-9a-f]{12}$/.test(value);
}

function decodeJwtPart(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A PEM block from its BEGIN line: the body up to -----END (real newlines or `\n` escapes, as in a
 * GCP service-account JSON), the whole block being the secret's range.
 */
function validatePrivateKey(text: string, index: number, header: string, allow: AllowList | undefined): Candidate | null {
  const bodyStart = index + header.length;
  const endIdx = text.indexOf('-----END', bodyStart);
  const limit = endIdx === -1 || endIdx - bodyStart > 20000 ? Math.min(text.length, bodyStart + 4000) : endIdx;
  const body = text.slice(bodyStart, limit).replace(/\\r|\\n/g, '\n');
  if (/\.\.\.|<[^>]*>|x{4,}|redacted|example/i.test(body)) return null;
  const b64 = body.split(/\r?\n/).filter((l) => !/^[A-Za-z-]+:/.test(l.trim())).join('').replace(/[^A-Za-z0-9+/=]/g, '');
  if (b64.length < 40 || isAllowed(b64, b64, allow)) return null;
  // Without an END line, everything read as the body counts as key material.
  let end = limit;
  if (endIdx !== -1 && endIdx === limit) {
    const close = text.indexOf('-----', endIdx + 8);
    end = close === -1 ? endIdx + 8 : close + 5;
  }
  return { start: index, end, secret: b64, envName: 'PRIVATE_KEY' };
}

const secretReCache = new Map<string, RegExp>();
const prefixReCache = new Map<string, RegExp>();

function cached(map: Map<string, RegExp>, source: string, make: (s: string) => RegExp): RegExp {
  let re = map.get(source);
  if (!re) map.set(source, (re = make(source)));
  return re;
}

function isPasswordPlaceholder(pw: string, match: string): boolean {
  const p = pw.toLowerCase();
  if (DEFAULT_PASSWORDS.has(p) || PLACEHOLDER.test(pw) || /^[*x.#_-]+$/i.test(pw) || /[{}$…]|%[sd(]/.test(pw)) return true;
  // user:user@, a password equal to the user name.
  const user = /\/\/([^:@/]+):/.exec(match)?.[1] ?? /(?:User ID|Uid|User|USER|user)[ \t]*=[ \t]*([^;]+)/.exec(match)?.[1];
  return user !== undefined && user.toLowerCase() === p;
}

function validate(rule: SecretRuleDef, text: string, m: string, index: number, rules: readonly SecretRuleDef[], allow: AllowList | undefined): Candidate | null {
  if (rule.check === 'pem') return validatePrivateKey(text, index, m, allow);
  if (rule.notAfter && index > 0 && rule.notAfter.includes(text[index - 1]!)) return null;
  let secret = m;
  let start = index;
  if (rule.secret) {
    const sm = cached(secretReCache, rule.secret, (s) => new RegExp(s, 'd')).exec(m);
    if (!sm || sm[1] === undefined) return null;
    secret = sm[1];
    start = index + sm.indices![1]![0];
    // A provider token inside the context (a GitHub token as a URL password) is that provider's finding.
    if (rule.defer && specificPattern(rules).test(secret)) return null;
  }
  const cand: Candidate = { start, end: start + secret.length, secret, envName: rule.envName };
  const body = rule.prefix ? secret.replace(cached(prefixReCache, rule.prefix, (s) => new RegExp(`^${s}`)), '') : secret;
  switch (rule.check) {
    case 'jwt': {
      if (isAllowed(m, m.replace(/\./g, ''), allow)) return null;
      const header = decodeJwtPart(m.slice(0, m.indexOf('.')));
      return header && typeof header === 'object' && ('alg' in header || 'typ' in header) ? cand : null;
    }
    case 'password':
      // Fewer than 5 distinct characters (`aaaa`, `1234`) is a placeholder, as for tokens.
      return isPasswordPlaceholder(secret, m) || isAllowed(secret, secret, allow) ? null : cand;
    case 'mixed': {
      const classes = [/[0-9]/, /[a-z]/, /[A-Z]/].filter((re) => re.test(body)).length;
      return classes >= 2 && shannonEntropy(body) >= 3 && !isAllowed(secret, body, allow) ? cand : null;
    }
    default:
      return isAllowed(secret, body, allow) ? null : cand;
  }
}

/** A rendering of a secret that never shows it: at most its first 4 characters, `…` and its length. */
export const redact = redactSecret;

class Lines {
  private starts: number[] | undefined;
  constructor(private readonly text: string) {}
  private build(): number[] {
    const s = [0];
    for (let i = this.text.indexOf('\n'); i !== -1; i = this.text.indexOf('\n', i + 1)) s.push(i + 1);
    return (this.starts = s);
  }
  /** 0-based line of an offset. */
  lineOf(pos: number): number {
    const s = this.starts ?? this.build();
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  range(start: number, end: number): Range {
    const s = this.starts ?? this.build();
    const a = this.lineOf(start);
    const b = this.lineOf(Math.max(start, end - 1));
    return { startLine: a + 1, startColumn: start - s[a]! + 1, endLine: b + 1, endColumn: end - s[b]! + 1 };
  }
  /** Offset of the first character of 1-based line n. */
  offsetOf(n: number): number {
    const s = this.starts ?? this.build();
    return s[n - 1] ?? 0;
  }
  line(n: number): string {
    const s = this.starts ?? this.build();
    const from = s[n - 1] ?? 0;
    const to = n < s.length ? s[n]! - 1 : this.text.length;
    return this.text.slice(from, to).replace(/\r$/, '');
  }
}

function fixFor(file: string, text: string, c: Candidate, lines: Lines): Fix | undefined {
  const ext = path.extname(file).toLowerCase();
  const py = ext === '.py';
  if (!JS_EXT.has(ext) && !py) return undefined;
  const q = text[c.start - 1];
  if ((q !== '"' && q !== "'" && q !== '`') || text[c.end] !== q) return undefined;
  const newText = py ? `os.environ["${c.envName}"]` : `process.env.${c.envName}`;
  return {
    description: py
      ? `Read the secret from the environment (os.environ["${c.envName}"], needs \`import os\`) and rotate the leaked value`
      : `Read the secret from the environment (process.env.${c.envName}) and rotate the leaked value`,
    edits: [{ file, range: lines.range(c.start - 1, c.end + 1), newText }],
  };
}

/** Scans one file's text. `file` is workspace-relative (forward slashes). */
export function scanTextDetailed(text: string, file: string, options: ScanOptions = {}): TextScanResult {
  const rules = options.rules ?? SECRET_RULE_DEFS;
  const re = combinedPattern(rules);
  const lines = new Lines(text);
  const raw: Array<{ finding: Finding; cand: Candidate; pem: boolean }> = [];
  const lower = TEST_PATH.test(file);
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    let i = 1;
    while (m[i] === undefined) i++;
    const rule = rules[i - 1]!;
    let cand: Candidate | null;
    if (rule.check === 'generic') {
      const g = validateGeneric(text, m[0], m.index, file, rules, options.allow);
      cand = g.cand;
      re.lastIndex = g.resume;
    } else {
      cand = validate(rule, text, m[0], m.index, rules, options.allow);
      // A context rule that gave way (a provider token as the password) lets that token match next.
      if (!cand && rule.defer) re.lastIndex = m.index + 1;
      if (cand && cand.end > re.lastIndex) re.lastIndex = cand.end;
    }
    if (!cand) continue;
    const range = lines.range(cand.start, cand.end);
    const finding: Finding = {
      ruleId: rule.id,
      severity: lower ? lowerSeverity(rule.severity) : rule.severity,
      message: `${rule.description} found (${rule.check === 'pem' ? redactPem(cand.end - cand.start) : redact(cand.secret)}); move it to a secret store or environment variable and rotate it${lower ? ' (in test data: reported one level lower)' : ''}`,
      file,
      range,
      fingerprint: fingerprint(rule.id, file, sha256(cand.secret)),
    };
    const fix = fixFor(file, text, cand, lines);
    if (fix) finding.fix = fix;
    raw.push({ finding, cand, pem: rule.check === 'pem' });
  }
  // Snippets: the finding's first line with every secret found on it cut out by position, then
  // swept once more for anything secret-shaped that the rules judged a placeholder.
  for (const { finding } of raw) {
    const n = finding.range.startLine;
    const lineStart = lines.offsetOf(n);
    const lineText = lines.line(n);
    const cuts = raw
      .filter((o) => o.finding.range.startLine <= n && o.finding.range.endLine >= n)
      .map((o) => ({
        from: Math.max(0, o.cand.start - lineStart),
        to: Math.min(lineText.length, o.cand.end - lineStart),
        text: o.pem ? redactPem(o.cand.end - o.cand.start) : redact(o.cand.secret),
      }));
    // The same value elsewhere on the line (a second assignment, a copy in a test) is the same secret.
    let shown = cutRanges(lineText, cuts);
    for (const o of raw) {
      const v = o.cand.secret;
      if (!o.pem && v.length >= 6 && o.finding.range.startLine <= n && o.finding.range.endLine >= n) shown = shown.split(v).join(redact(v));
    }
    finding.snippet = truncateSnippet(redactSecretsIn(shown).trim());
  }
  const findings = raw.map((r) => r.finding);
  if (options.suppressions === false) return { findings, suppressed: [] };
  const directives = parseSuppressions(text);
  if (directives.length === 0) return { findings, suppressed: [] };
  const families = new Map(rules.map((r) => [r.id, r.family as string]));
  const res = applySuppressions(findings, new Map([[file, directives]]), families);
  return { findings: [...res.kept, ...res.invalid], suppressed: res.suppressed };
}

function lowerSeverity(s: Severity): Severity {
  return s === 'critical' ? 'high' : s === 'high' ? 'medium' : s === 'medium' ? 'low' : s === 'low' ? 'info' : s;
}

/** Scans one file's text; suppressed findings are dropped. */
export function scanText(text: string, file: string, options: ScanOptions = {}): Finding[] {
  return scanTextDetailed(text, file, options).findings;
}

/** A NUL byte in the first 8 KiB marks a binary file. */
export function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8192).includes(0);
}

interface IgnoreRule { negate: boolean; test: (rel: string, isDir: boolean) => boolean }

/** A glob as an anchored RegExp: `**` spans directories, `*` and `?` stay within one path segment. */
export function globToRegExp(glob: string): RegExp {
  const src = glob.replace(/[.+^$()|[\]\\{}]/g, '\\$&').replace(/\*\*\/?/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\u0000/g, '(?:.*/)?');
  return new RegExp(`^${src}$`);
}

/** Simple .gitignore support: names, globs, anchored paths, trailing `/`, `!` negation. */
export function parseGitignore(text: string): IgnoreRule[] {
  const out: IgnoreRule[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.trim();
    if (!line || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.includes('/');
    const re = globToRegExp(line.replace(/^\//, ''));
    out.push({
      negate,
      test: (rel, isDir) => (!dirOnly || isDir) && (anchored ? re.test(rel) : re.test(rel.slice(rel.lastIndexOf('/') + 1))),
    });
  }
  return out;
}

function ignored(rules: readonly IgnoreRule[], rel: string, isDir: boolean): boolean {
  let out = false;
  for (const r of rules) if (r.test(rel, isDir)) out = !r.negate;
  return out;
}

/** Workspace-relative files under `root`, minus skip dirs and .gitignore'd paths. Symlinks are not followed. */
export function listFiles(root: string, options: ScanOptions = {}): string[] {
  const skip = new Set(options.skipDirs ?? DEFAULT_SKIP_DIRS);
  let ignore: IgnoreRule[] = [];
  if (options.gitignore !== false) {
    try {
      ignore = parseGitignore(readFileSync(path.join(root, '.gitignore'), 'utf8'));
    } catch {
      // no .gitignore
    }
  }
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!skip.has(e.name) && !ignored(ignore, r, true)) walk(path.join(dir, e.name), r);
      } else if (e.isFile() && !ignored(ignore, r, false)) {
        out.push(r);
      }
    }
  };
  walk(root, '');
  return out;
}

export interface TreeScanOptions extends ScanOptions {
  files?: readonly string[];
  /**
   * Worker threads that share a large scan with this thread: 'auto' (default) uses up to
   * availableParallelism() − 1 (at most 3) when the files add up to PARALLEL_MIN_BYTES or more; 0 never.
   */
  workers?: number | 'auto';
}

export type SkipReason = 'binary' | 'too-large' | 'unreadable' | 'allow-listed' | 'outside-workspace';

export interface TreeScanResult {
  findings: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
  /** Files listed (after skip dirs and .gitignore). */
  filesConsidered: number;
  filesScanned: number;
  bytesScanned: number;
  skipped: Array<{ file: string; reason: SkipReason }>;
}

/** What scanning one file adds to a tree result. */
export interface FileScanOutcome {
  file: string;
  findings: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
  skipped?: SkipReason;
  bytes: number;
}

/** Options that can cross to a scan worker (no AbortSignal). */
export type PortableScanOptions = Omit<ScanOptions, 'signal'>;

/** Reads and scans one workspace-relative file (`size` from a prior stat, if known). */
export function scanFile(root: string, file: string, options: PortableScanOptions, size?: number): FileScanOutcome {
  const max = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const none = { file, findings: [], suppressed: [], bytes: 0 };
  if (options.allow?.paths?.some((p) => p.test(file))) return { ...none, skipped: 'allow-listed' };
  // A listed file that resolves outside the root (a symlink out, `..`) or to protected data is not read.
  const confined = new WorkspaceFiles(root).resolve(file);
  if (!confined.ok && confined.reason !== 'not found') return { ...none, skipped: 'outside-workspace' };
  const abs = path.join(root, file);
  let buf: Buffer;
  try {
    if ((size ?? statSync(abs).size) > max) return { ...none, skipped: 'too-large' };
    buf = readFileSync(abs);
  } catch {
    return { ...none, skipped: 'unreadable' };
  }
  if (buf.length > max) return { ...none, skipped: 'too-large' };
  if (isBinary(buf)) return { ...none, skipped: 'binary' };
  const r = scanTextDetailed(buf.toString('utf8'), file, options);
  return { file, findings: r.findings, suppressed: r.suppressed, bytes: buf.length };
}

/** Folds one file's outcome into a tree result. */
export function addOutcome(result: TreeScanResult, o: FileScanOutcome): void {
  if (o.skipped) {
    result.skipped.push({ file: o.file, reason: o.skipped });
    return;
  }
  for (const f of o.findings) result.findings.push(f);
  for (const s of o.suppressed) result.suppressed.push(s);
  result.filesScanned++;
  result.bytesScanned += o.bytes;
}

/** Deterministic order whatever thread scanned what. */
export function finishTreeResult(result: TreeScanResult): TreeScanResult {
  sortFindings(result.findings);
  result.suppressed.sort((a, b) => a.finding.file.localeCompare(b.finding.file) || a.finding.range.startLine - b.finding.range.startLine
    || a.finding.range.startColumn - b.finding.range.startColumn);
  result.skipped.sort((a, b) => a.file.localeCompare(b.file));
  return result;
}

/**
 * Scans `files` (workspace-relative; default: listFiles(root)). Yields to the event loop every 64
 * files. Large scans (see `TreeScanOptions.workers`) are shared with scan worker threads.
 */
export async function scanTree(root: string, options: TreeScanOptions = {}): Promise<TreeScanResult> {
  const files = (options.files ?? listFiles(root, options)).map(toWorkspacePath);
  const parallel = await scanTreeParallel(root, files, options);
  if (parallel) return parallel;
  const result: TreeScanResult = { findings: [], suppressed: [], filesConsidered: files.length, filesScanned: 0, bytesScanned: 0, skipped: [] };
  const { signal, files: _f, workers: _w, ...portable } = options;
  let n = 0;
  for (const file of files) {
    if (++n % 64 === 0) await new Promise<void>((r) => setImmediate(r));
    signal?.throwIfAborted();
    addOutcome(result, scanFile(root, file, portable));
  }
  return finishTreeResult(result);
}

/**
 * Scan coverage: scanned / (considered − binary − allow-listed). Binary and allow-listed files
 * cannot hold a text secret we would report, so they do not count against coverage.
 */
export function coverageOf(r: Pick<TreeScanResult, 'filesConsidered' | 'filesScanned' | 'skipped'>): number {
  const excluded = r.skipped.filter((s) => s.reason === 'binary' || s.reason === 'allow-listed').length;
  const denom = r.filesConsidered - excluded;
  return denom <= 0 ? 0 : r.filesScanned / denom;
}
