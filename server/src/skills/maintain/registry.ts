/**
 * Registry metadata for maintain-ai `dependencies` and `fix`: npm packuments
 * (`{name, 'dist-tags': {latest}, versions: {v: {deprecated?}}}`), from a workspace file given as
 * `input.registry` (one packument, an array of them, or an object of name → packument), or fetched
 * from registry.npmjs.org (the abbreviated "corgi" document, which keeps `deprecated`) when the step
 * proposed `http_request` and ACMF allowed it. A failed fetch is reported as such, never replaced by
 * a guess.
 */
import { WorkspaceFiles } from '../workspace/files';
import { lineOf, ManifestError, parseJsonAt } from './manifests';

export interface Packument {
  name: string;
  latest: string | null;
  /** Every published version, with its deprecation message when it has one. */
  versions: Map<string, { deprecated?: string }>;
  /** Where it came from: the file (and line of its name) or the URL. */
  source: string;
}

const MAX_REGISTRY_FILE = 64 * 1024 * 1024;
export const REGISTRY_URL = 'https://registry.npmjs.org/';

function toPackument(raw: unknown, source: string): Packument | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return 'a packument must be an object {name, dist-tags, versions}';
  const o = raw as Record<string, unknown>;
  if (typeof o['name'] !== 'string' || !o['name']) return 'a packument lacks its name';
  const versions = o['versions'];
  if (!versions || typeof versions !== 'object' || Array.isArray(versions)) return `${o['name']}: versions must be an object of version → manifest`;
  const tags = o['dist-tags'];
  const latest = tags && typeof tags === 'object' && typeof (tags as Record<string, unknown>)['latest'] === 'string' ? (tags as Record<string, string>)['latest']! : null;
  const map = new Map<string, { deprecated?: string }>();
  for (const [v, m] of Object.entries(versions as Record<string, unknown>)) {
    const dep = m && typeof m === 'object' ? (m as Record<string, unknown>)['deprecated'] : undefined;
    // npm un-deprecates with an empty string.
    map.set(v, typeof dep === 'string' && dep ? { deprecated: dep } : {});
  }
  return { name: o['name'], latest, versions: map, source };
}

/** Parses a registry file's text: one packument, an array, or an object of name → packument. */
export function parseRegistryFile(file: string, text: string): Packument[] {
  const json = parseJsonAt(file, text);
  const list: unknown[] = Array.isArray(json) ? json
    : json && typeof json === 'object' && 'versions' in json ? [json]
      : json && typeof json === 'object' ? Object.values(json as Record<string, unknown>) : [];
  if (!list.length) throw new ManifestError(file, 1, 'expected npm packuments: {name, dist-tags, versions}, an array of them, or an object of name → packument');
  const out: Packument[] = [];
  for (const raw of list) {
    const name = raw && typeof raw === 'object' ? (raw as Record<string, unknown>)['name'] : undefined;
    const at = typeof name === 'string' ? text.indexOf(`"name": ${JSON.stringify(name)}`) : -1;
    const line = at === -1 ? undefined : lineOf(text, at);
    const p = toPackument(raw, `${file}${line ? `:${line}` : ''}`);
    if (typeof p === 'string') throw new ManifestError(file, line, p);
    out.push(p);
  }
  return out;
}

/** `input.registry`: a workspace file or a list of them. Throws ManifestError / returns an error line for a refused path. */
export function readRegistryInput(ws: WorkspaceFiles, raw: unknown): { packuments: Map<string, Packument>; files: string[] } | { error: string } {
  const given = typeof raw === 'string' ? [raw] : Array.isArray(raw) && raw.every((x) => typeof x === 'string') ? (raw as string[]) : undefined;
  if (!given?.length) return { error: 'input.registry must be a workspace file of npm packuments (or a list of files)' };
  const packuments = new Map<string, Packument>();
  const files: string[] = [];
  for (const g of given) {
    const r = ws.readText(g, MAX_REGISTRY_FILE);
    if (!r.ok) return { error: r.reason === 'not found' ? `input.registry: ${g} does not exist in the workspace` : `input.registry: ${g} is ${r.reason}; not read` };
    files.push(r.rel);
    for (const p of parseRegistryFile(r.rel, r.text)) packuments.set(p.name, p);
  }
  return { packuments, files };
}

/**
 * Fetches the packuments of `names` from the public registry, a few at a time, each bounded by a
 * timeout. Packages the registry does not know (404) are listed as missing; a network failure is
 * returned as such with the first error.
 */
export async function fetchPackuments(names: readonly string[], signal: AbortSignal, base = REGISTRY_URL): Promise<{ packuments: Map<string, Packument>; missing: string[]; failed?: string }> {
  const packuments = new Map<string, Packument>();
  const missing: string[] = [];
  let failed: string | undefined;
  const queue = [...names];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined && !failed; name = queue.shift()) {
      const url = `${base}${name.startsWith('@') ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name)}`;
      try {
        const res = await fetch(url, { headers: { accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8' }, signal: AbortSignal.any([signal, AbortSignal.timeout(15_000)]) });
        if (res.status === 404) { missing.push(name); continue; }
        if (!res.ok) { failed = `${url}: HTTP ${res.status}`; return; }
        const p = toPackument(await res.json(), url);
        if (typeof p === 'string') { failed = `${url}: ${p}`; return; }
        packuments.set(name, p);
      } catch (e) {
        failed = `${url}: ${e instanceof Error ? (e.cause instanceof Error ? `${e.message} (${e.cause.message})` : e.message) : String(e)}`;
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(6, names.length) }, worker));
  return { packuments, missing, ...(failed ? { failed } : {}) };
}
