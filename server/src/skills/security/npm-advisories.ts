/**
 * The npm registry's bulk advisory endpoint, as npm itself calls it (arborist `audit-report.js`
 * through npm-registry-fetch with `gzip: true`):
 *
 *   POST {registry}/-/npm/v1/security/advisories/bulk
 *   content-type: application/json, content-encoding: gzip
 *   body (gzipped JSON): { "<package name>": ["<version>", ...], ... }
 *
 * answered by `{ "<package name>": [ { id, url, title, severity, vulnerable_versions, cwe, cvss } ] }`.
 * The answer may list advisories that do not affect the versions sent, so every advisory's
 * `vulnerable_versions` is matched locally against each locked version (as npm's
 * metavuln-calculator does, prereleases included).
 *
 * Only called by security-ai `scan` when the step asks for it (`input.online`), the tier is PRO or
 * higher and ACMF allowed the `http_request` action; see skill.ts.
 */
import { gzipSync } from 'node:zlib';
import { fingerprint, sortFindings, toWorkspacePath, type Finding, type RuleInfo, type Severity } from '../findings/finding';
import type { LockedPackage } from './dependencies';
import { firstOutside, parseNpmRange, satisfiesNpmRange } from './semver';

export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/';
export const BULK_ADVISORY_PATH = '-/npm/v1/security/advisories/bulk';
/** ACMF action kind proposed for the lookup (an outbound HTTP request; external). */
export const ONLINE_ACTION_KIND = 'http_request';
/** Package names per request. */
export const NPM_ADVISORY_BATCH = 500;
export const DEFAULT_ONLINE_TIMEOUT_MS = 30_000;
/** Largest answer read (per request). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const NPM_RULE_PREFIX = 'deps/';

export interface NpmAdvisory {
  id: number | string;
  url?: string;
  title?: string;
  severity?: string;
  vulnerable_versions: string;
  cwe?: string[];
  cvss?: { score?: number; vectorString?: string | null };
}

/** What a step asked for with `input.online`. */
export type OnlineRequest =
  | { requested: false }
  | { requested: true; registry: string; timeoutMs: number }
  | { requested: true; error: string };

/**
 * `input.online`: `true`, or `{ registry?: string, timeoutMs?: number }`. The registry is
 * `input.online.registry`, else the `npm_config_registry` environment variable (as npm sets it for
 * scripts; `NPM_CONFIG_REGISTRY` too), else https://registry.npmjs.org/.
 */
export function onlineRequest(input: unknown, env: NodeJS.ProcessEnv = process.env): OnlineRequest {
  if (input === undefined || input === false || input === null) return { requested: false };
  if (input !== true && (typeof input !== 'object' || Array.isArray(input))) return { requested: true, error: 'input.online must be true or { registry?, timeoutMs? }' };
  const o = input === true ? {} : (input as Record<string, unknown>);
  const reg = o['registry'] ?? env['npm_config_registry'] ?? env['NPM_CONFIG_REGISTRY'] ?? DEFAULT_NPM_REGISTRY;
  if (typeof reg !== 'string' || !reg.trim()) return { requested: true, error: 'input.online.registry must be an http(s) URL' };
  let url: URL;
  try {
    url = new URL(reg.trim());
  } catch {
    return { requested: true, error: `not a registry URL: ${redactUrl(reg)}` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { requested: true, error: `the registry must be an http(s) URL: ${redactUrl(reg)}` };
  const t = o['timeoutMs'];
  if (t !== undefined && (typeof t !== 'number' || !(t > 0))) return { requested: true, error: 'input.online.timeoutMs must be a positive number' };
  return { requested: true, registry: url.href.endsWith('/') ? url.href : `${url.href}/`, timeoutMs: typeof t === 'number' ? Math.min(t, 600_000) : DEFAULT_ONLINE_TIMEOUT_MS };
}

/** The endpoint under a registry (a path prefix such as `/api/npm/remote/` is kept). */
export function bulkAdvisoryUrl(registry: string): string {
  return new URL(BULK_ADVISORY_PATH, registry.endsWith('/') ? registry : `${registry}/`).href;
}

/** A URL without user name and password, for messages and reports. */
export function redactUrl(u: string): string {
  try {
    const url = new URL(u);
    if (url.username || url.password) {
      url.username = '';
      url.password = '';
    }
    return url.href;
  } catch {
    return u.replace(/\/\/[^/@]*@/, '//');
  }
}

/** How the online lookup went, in the dependencies check of the report. */
export interface OnlineLookupReport {
  /** `ran`: every request answered; `partial`: some did; `failed`: none did; `skipped`: not attempted (see reason). */
  status: 'ran' | 'partial' | 'failed' | 'skipped';
  reason?: string;
  /** The endpoint (credentials removed). */
  endpoint?: string;
  /** Distinct package names asked about (this scan). */
  packages?: number;
  requests?: number;
  answered?: number;
  /** Advisories the registry returned for the packages asked about. */
  advisories?: number;
  /** Findings from the registry's advisories (after de-duplication against the local OSV file). */
  findings?: number;
  /** Registry findings dropped because the local OSV file reported the same advisory. */
  duplicates?: number;
  /** Advisories whose `vulnerable_versions` could not be read (never counted as affecting). */
  unreadableRanges?: number;
  errors?: string[];
}

export interface LookupOutcome {
  /** Advisories per package name, for the packages asked about in this and earlier lookups. */
  advisories: Map<string, NpmAdvisory[]>;
  packages: number;
  requests: number;
  answered: number;
  errors: string[];
}

function isAdvisory(x: unknown): x is NpmAdvisory {
  if (!x || typeof x !== 'object') return false;
  const a = x as Record<string, unknown>;
  return (typeof a['id'] === 'number' || typeof a['id'] === 'string') && typeof a['vulnerable_versions'] === 'string';
}

/**
 * Client of the bulk endpoint with a per-name@version memory, so that the two scans of a
 * `since` run (the old tree and today's) ask about each locked version once. After a request
 * that did not reach the registry (network error, timeout, abort), later lookups are not
 * attempted and report that error again.
 */
export class NpmAdvisoryClient {
  readonly endpoint: string;
  private readonly asked = new Set<string>();
  private readonly byName = new Map<string, Map<string, NpmAdvisory>>();
  private unreachable: string | undefined;
  /** Requests sent so far (over every lookup). */
  requestsSent = 0;

  constructor(readonly registry: string, readonly timeoutMs: number = DEFAULT_ONLINE_TIMEOUT_MS, private readonly fetchImpl: typeof fetch = fetch) {
    this.endpoint = bulkAdvisoryUrl(registry);
  }

  /** Asks about every name@version of `wanted` not asked before, in batches of {@link NPM_ADVISORY_BATCH} names. */
  async lookup(wanted: ReadonlyMap<string, ReadonlySet<string>>, signal?: AbortSignal): Promise<LookupOutcome> {
    const todo = new Map<string, string[]>();
    for (const [name, versions] of wanted) {
      for (const v of versions) {
        const k = `${name}@${v}`;
        if (this.asked.has(k)) continue;
        todo.set(name, [...(todo.get(name) ?? []), v]);
      }
    }
    const names = [...todo.keys()].sort();
    const out: LookupOutcome = { advisories: new Map(), packages: wanted.size, requests: 0, answered: 0, errors: [] };
    for (let i = 0; i < names.length; i += NPM_ADVISORY_BATCH) {
      if (this.unreachable) {
        out.errors.push(this.unreachable);
        break;
      }
      const body: Record<string, string[]> = {};
      for (const n of names.slice(i, i + NPM_ADVISORY_BATCH)) body[n] = todo.get(n)!;
      out.requests++;
      this.requestsSent++;
      const r = await this.post(body, signal);
      if (typeof r === 'string') {
        out.errors.push(`request ${out.requests} (${Object.keys(body).length} package(s)): ${r}`);
        continue;
      }
      out.answered++;
      for (const [n, vs] of Object.entries(body)) for (const v of vs) this.asked.add(`${n}@${v}`);
      for (const [n, list] of Object.entries(r)) {
        if (!(n in body)) continue; // only what was asked
        const m = this.byName.get(n) ?? new Map<string, NpmAdvisory>();
        for (const a of list) m.set(String(a.id), a);
        this.byName.set(n, m);
      }
    }
    for (const name of wanted.keys()) {
      const m = this.byName.get(name);
      if (m?.size) out.advisories.set(name, [...m.values()]);
    }
    return out;
  }

  /** One request: the answer, or why there is none. Never throws. */
  private async post(body: Record<string, string[]>, signal?: AbortSignal): Promise<Record<string, NpmAdvisory[]> | string> {
    if (signal?.aborted) return this.fail('aborted before the request (the step was cancelled)');
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await this.fetchImpl(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', accept: 'application/json', 'user-agent': 'cadre-security-ai' },
        body: gzipSync(JSON.stringify(body)),
        signal: sig,
        // An approved request goes to the URL that was approved, not wherever a redirect points.
        redirect: 'manual',
      });
    } catch (e) {
      return this.fail(this.why(e, signal, timeout));
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      return `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''} from ${redactUrl(this.endpoint)}`;
    }
    let text: string;
    try {
      text = await readLimited(res, MAX_ANSWER_BYTES);
    } catch (e) {
      return this.fail(this.why(e, signal, timeout));
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return 'the answer is not JSON';
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) return 'the answer is not an object keyed by package name';
    const out: Record<string, NpmAdvisory[]> = {};
    for (const [n, list] of Object.entries(json as Record<string, unknown>)) {
      if (Array.isArray(list)) out[n] = list.filter(isAdvisory);
    }
    return out;
  }

  private why(e: unknown, signal: AbortSignal | undefined, timeout: AbortSignal): string {
    if (signal?.aborted) return 'aborted (the step was cancelled)';
    if (timeout.aborted) return `no answer within ${this.timeoutMs} ms (timed out)`;
    const err = e as { message?: string; cause?: { code?: string; message?: string } };
    const detail = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
    return `network error: ${detail}`;
  }

  private fail(why: string): string {
    this.unreachable = `the registry was not reached: ${why}`;
    return why;
  }
}

async function readLimited(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`the answer exceeds ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** GHSA id in an advisory URL (`https://github.com/advisories/GHSA-xxxx-xxxx-xxxx`), normalized. */
export function ghsaOf(url: string | undefined): string | undefined {
  const m = url ? /GHSA(-[0-9a-z]{4}){3}/i.exec(url) : null;
  return m ? `GHSA${m[0].slice(4).toLowerCase()}` : undefined;
}

/** The advisory's id in rule ids: its GHSA id when the URL has one (as OSV records use), else `npm-<id>`. */
export function npmAdvisoryId(a: NpmAdvisory): string {
  return ghsaOf(a.url) ?? `npm-${String(a.id)}`;
}

/** npm's low/moderate/high/critical (moderate → medium); else from the CVSS score; else medium. */
export function npmSeverity(a: NpmAdvisory): Severity {
  const s = typeof a.severity === 'string' ? a.severity.toLowerCase() : '';
  if (s === 'critical' || s === 'high' || s === 'low' || s === 'info') return s;
  if (s === 'moderate' || s === 'medium') return 'medium';
  const score = a.cvss?.score;
  if (typeof score === 'number' && score > 0) return score >= 9 ? 'critical' : score >= 7 ? 'high' : score >= 4 ? 'medium' : 'low';
  return 'medium';
}

export function npmAdvisoryRuleInfo(a: NpmAdvisory): RuleInfo {
  return { id: `${NPM_RULE_PREFIX}${npmAdvisoryId(a)}`, description: a.title?.trim() || npmAdvisoryId(a), severity: npmSeverity(a), family: 'dependencies', ...(a.url ? { helpUri: a.url } : {}) };
}

/** Names and versions of lock file entries, as the request body wants them. */
export function wantedVersions(packages: Iterable<LockedPackage>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const p of packages) {
    if (!p.name || !p.version) continue;
    const s = out.get(p.name) ?? new Set<string>();
    s.add(p.version);
    out.set(p.name, s);
  }
  return out;
}

export interface NpmMatchResult {
  findings: Finding[];
  rules: RuleInfo[];
  unreadableRanges: number;
  duplicates: number;
}

/**
 * One finding per (name@version, advisory) of a lock file whose version is inside the advisory's
 * `vulnerable_versions`, shaped like the OSV findings (rule `deps/<GHSA id or npm-<id>>`, the same
 * fingerprint parts). `seen(file, name@version, advisoryId)` drops the ones the local OSV file
 * already reported.
 */
export function matchNpmAdvisories(packages: readonly LockedPackage[], advisories: ReadonlyMap<string, readonly NpmAdvisory[]>, file: string,
  seen: (file: string, key: string, id: string) => boolean = () => false): NpmMatchResult {
  file = toWorkspacePath(file);
  const groups = new Map<string, LockedPackage[]>();
  for (const p of packages) {
    const k = `${p.name}@${p.version}`;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  const out: NpmMatchResult = { findings: [], rules: [], unreadableRanges: 0, duplicates: 0 };
  const ruleIds = new Set<string>();
  for (const [key, entries] of groups) {
    const { name, version } = entries[0]!;
    for (const a of advisories.get(name) ?? []) {
      const range = parseNpmRange(a.vulnerable_versions);
      if (!range) {
        out.unreadableRanges++;
        continue;
      }
      if (satisfiesNpmRange(version, range) !== true) continue;
      const id = npmAdvisoryId(a);
      if (seen(file, key, id)) {
        out.duplicates++;
        continue;
      }
      const ruleId = `${NPM_RULE_PREFIX}${id}`;
      const line = entries.find((e) => e.line !== undefined)?.line ?? 1;
      const where = entries.length > 1 ? ` (${entries.length} entries: ${entries.slice(0, 3).map((e) => e.path).join(', ')}${entries.length > 3 ? ', ...' : ''})` : '';
      const npmId = id.startsWith('npm-') ? '' : ` (npm advisory ${String(a.id)})`;
      const fix = firstOutside(version, range);
      out.findings.push({
        ruleId,
        severity: npmSeverity(a),
        message: `${key} is affected by ${id}${npmId}: ${a.title?.trim() || 'no title'}; vulnerable versions ${a.vulnerable_versions}, ${fix ? `upgrade to ${fix} or later (the first version of this line outside the range)` : 'upgrade to a version outside that range'}${a.url ? `; ${a.url}` : ''} (npm registry advisory)${where}`,
        file,
        range: { startLine: line, startColumn: 1, endLine: line, endColumn: 1 },
        snippet: key,
        fingerprint: fingerprint(ruleId, file, key),
      });
      if (!ruleIds.has(ruleId)) {
        ruleIds.add(ruleId);
        out.rules.push(npmAdvisoryRuleInfo(a));
      }
    }
  }
  sortFindings(out.findings);
  return out;
}
