/**
 * Deployment facts of a workspace: what deploy-ai's `plan` and `deploy` build on. Everything is read
 * through WorkspaceFiles (confined to the workspace: a symlink that leads outside is refused, protected
 * paths are never read) and every fact names its file and line, so a plan can be checked against the
 * sources. Nothing is guessed: a workspace without a health route says so.
 *
 * Sources: package.json scripts (build, start, deploy, deploy:<env>), Dockerfile (EXPOSE, HEALTHCHECK),
 * Kubernetes Deployments (replicas, strategy, readiness/liveness/startup probes with httpGet path and
 * port) parsed with `yaml`, docker-compose healthchecks, and health routes registered in JS/TS sources.
 */
import * as path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode } from 'yaml';
import { walkFiles, WorkspaceFiles } from '../workspace/files';

/** Where a fact was read: workspace-relative path (forward slashes) and 1-based line. */
export interface FactSource { file: string; line: number }

export interface ScriptFact extends FactSource { name: string; command: string }
export interface DockerfileFact extends FactSource { expose: number[]; healthcheck: (FactSource & { command: string }) | null }
export interface ProbeFact extends FactSource { type: 'readiness' | 'liveness' | 'startup'; path: string | null; port: string | null; how: 'httpGet' | 'tcpSocket' | 'exec' | 'grpc' | 'unknown' }
export interface K8sDeploymentFact extends FactSource {
  name: string;
  replicas: number | null;
  /** spec.strategy.type (RollingUpdate when absent: the Kubernetes default). */
  strategy: string;
  /** spec.strategy.rollingUpdate, as written. */
  rollingUpdate: { maxSurge: string | null; maxUnavailable: string | null } | null;
  probes: ProbeFact[];
}
export interface ComposeHealthFact extends FactSource { service: string; test: string }
export interface HealthRouteFact extends FactSource { path: string; text: string }

export interface DeployFacts {
  /** package.json scripts that matter to a deployment (build, start, deploy, deploy:<env>). */
  scripts: ScriptFact[];
  /** package.json `name`, when there is one. */
  packageName: string | null;
  dockerfiles: DockerfileFact[];
  k8s: K8sDeploymentFact[];
  /** Folders holding the Kubernetes manifests (workspace-relative). */
  k8sDirs: string[];
  compose: ComposeHealthFact[];
  healthRoutes: HealthRouteFact[];
  /** Files read (workspace-relative). */
  filesRead: string[];
  /** Paths not read and why (outside the workspace, protected): names only. */
  refused: string[];
}

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.next', '.cache', 'vendor', 'target', '.venv', 'venv', '__pycache__', 'out']);
const MAX_FILE_BYTES = 1024 * 1024;
const SCRIPT_NAMES = /^(build|start|deploy(?::[\w.-]+)?)$/;
const SOURCE_EXT = /\.(?:[cm]?js|jsx|[cm]?ts|tsx)$/;
const TEST_FILE = /(?:^|\/)(?:test|tests|__tests__|spec|e2e)\/|\.(?:test|spec)\.[cm]?[jt]sx?$/;
/** Health paths the brief's platforms use (Kubernetes, load balancers, PaaS). */
const HEALTH_LITERAL = /(['"`])(?:(?:GET|HEAD|ALL)\s+)?(\/(?:health|healthz|healthcheck|ready|readyz|readiness|live|livez|liveness)(?:\/[\w.-]*)?)\1/;
/** A line that registers a route (not one that calls it: fetch('/health') in a client is not a route). */
const ROUTE_CONTEXT = /\.(?:get|head|all|route|use|on|register|handle)\s*\(|['"`](?:GET|HEAD|ALL)\s+\/|\b(?:url|path|pathname|route)\b\s*(?:===?|:)|case\s+['"`]|['"`]\s*:\s*(?:async\s*)?(?:\(|function)|\bpath\s*:/i;
const CLIENT_CALL = /\b(?:fetch|axios(?:\.\w+)?|request|got|http\.get|https\.get|supertest)\s*\(/;

/** 1-based line of `index` in `text`. */
function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function packageFacts(files: WorkspaceFiles, facts: DeployFacts): void {
  const r = files.readText('package.json', MAX_FILE_BYTES);
  if (!r.ok) return;
  facts.filesRead.push('package.json');
  let pkg: Record<string, unknown>;
  try { pkg = JSON.parse(r.text) as Record<string, unknown>; } catch { return; }
  if (typeof pkg['name'] === 'string') facts.packageName = pkg['name'];
  const scripts = pkg['scripts'] && typeof pkg['scripts'] === 'object' ? (pkg['scripts'] as Record<string, unknown>) : {};
  // The line of each script is where its key is written inside "scripts" (the key alone can appear elsewhere).
  const block = r.text.search(/"scripts"\s*:/);
  for (const [name, command] of Object.entries(scripts)) {
    if (typeof command !== 'string' || !SCRIPT_NAMES.test(name)) continue;
    const key = new RegExp(`"${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\s*:`, 'g');
    key.lastIndex = Math.max(0, block);
    const m = key.exec(r.text);
    facts.scripts.push({ name, command, file: 'package.json', line: m ? lineAt(r.text, m.index) : 1 });
  }
}

function dockerfileFacts(files: WorkspaceFiles, rel: string, facts: DeployFacts): void {
  const r = files.readText(rel, MAX_FILE_BYTES);
  if (!r.ok) return;
  facts.filesRead.push(rel);
  const lines = r.text.split('\n');
  const fact: DockerfileFact = { file: rel, line: 1, expose: [], healthcheck: null };
  for (let i = 0; i < lines.length; i++) {
    // Continuation lines (`\`) are joined so a multi-line HEALTHCHECK is read whole.
    let text = lines[i]!;
    const start = i;
    while (/\\\s*$/.test(text) && i + 1 < lines.length) text = text.replace(/\\\s*$/, ' ') + lines[++i]!.trim();
    const expose = /^\s*EXPOSE\s+(.+)$/i.exec(text);
    if (expose) {
      for (const p of expose[1]!.split(/\s+/)) { const n = Number.parseInt(p, 10); if (Number.isFinite(n)) fact.expose.push(n); }
      if (fact.line === 1) fact.line = start + 1;
    }
    const hc = /^\s*HEALTHCHECK\s+(.+)$/i.exec(text);
    if (hc && !/^NONE\b/i.test(hc[1]!.trim())) fact.healthcheck = { file: rel, line: start + 1, command: hc[1]!.replace(/\s+/g, ' ').trim() };
  }
  facts.dockerfiles.push(fact);
}

const str = (n: unknown): string | null => (isScalar(n) && n.value !== null && n.value !== undefined ? String(n.value) : null);

function get(node: unknown, ...keys: string[]): unknown {
  let cur: unknown = node;
  for (const k of keys) {
    if (!isMap(cur)) return undefined;
    cur = cur.get(k, true);
  }
  return cur;
}

function nodeLine(n: unknown, lc: LineCounter): number {
  const range = (n as YamlNode | undefined)?.range;
  return range ? lc.linePos(range[0]).line : 1;
}

/** The line of `key` itself in a map (where `readinessProbe:` is written), else the value's line. */
function keyLine(map: unknown, key: string, lc: LineCounter): number {
  if (!isMap(map)) return 1;
  const pair = map.items.find((p) => str(p.key) === key);
  return pair ? nodeLine(pair.key, lc) : 1;
}

function yamlFacts(files: WorkspaceFiles, rel: string, facts: DeployFacts): void {
  const r = files.readText(rel, MAX_FILE_BYTES);
  if (!r.ok) return;
  // Only files that look like Kubernetes manifests or compose files are parsed.
  const k8sLike = /^\s*kind\s*:\s*\w+/m.test(r.text) && /^\s*apiVersion\s*:/m.test(r.text);
  const composeLike = /(?:^|\/)(?:docker-)?compose(?:\.[\w-]+)?\.ya?ml$/.test(rel);
  if (!k8sLike && !composeLike) return;
  facts.filesRead.push(rel);
  const lc = new LineCounter();
  let docs: ReturnType<typeof parseAllDocuments>;
  try { docs = parseAllDocuments(r.text, { lineCounter: lc }); } catch { return; }
  if (!Array.isArray(docs)) return;
  let sawManifest = false;
  for (const doc of docs) {
    if (doc.errors.length) continue;
    const root = doc.contents;
    if (!isMap(root)) continue;
    const kind = str(root.get('kind', true));
    if (kind) sawManifest = true;
    if (kind === 'Deployment' || kind === 'StatefulSet' || kind === 'DaemonSet') {
      const name = str(get(root, 'metadata', 'name')) ?? '(unnamed)';
      const replicasNode = get(root, 'spec', 'replicas');
      const replicas = str(replicasNode) !== null && Number.isFinite(Number(str(replicasNode))) ? Number(str(replicasNode)) : null;
      const strategy = str(get(root, 'spec', 'strategy', 'type')) ?? str(get(root, 'spec', 'updateStrategy', 'type')) ?? 'RollingUpdate';
      const ru = get(root, 'spec', 'strategy', 'rollingUpdate');
      const probes: ProbeFact[] = [];
      const containers = get(root, 'spec', 'template', 'spec', 'containers');
      if (isSeq(containers)) {
        for (const c of containers.items) {
          for (const [key, type] of [['readinessProbe', 'readiness'], ['livenessProbe', 'liveness'], ['startupProbe', 'startup']] as const) {
            const probe = get(c, key);
            if (!isMap(probe)) continue;
            const how = isMap(probe.get('httpGet', true)) ? 'httpGet' : isMap(probe.get('tcpSocket', true)) ? 'tcpSocket' : probe.get('exec', true) ? 'exec' : probe.get('grpc', true) ? 'grpc' : 'unknown';
            const via = how === 'httpGet' ? get(probe, 'httpGet') : how === 'tcpSocket' ? get(probe, 'tcpSocket') : undefined;
            probes.push({ type, how, path: how === 'httpGet' ? str(get(via, 'path')) ?? '/' : null, port: via ? str(get(via, 'port')) : null, file: rel, line: keyLine(c, key, lc) });
          }
        }
      }
      facts.k8s.push({
        name, replicas, strategy, probes, file: rel, line: nodeLine(root.get('kind', true), lc),
        rollingUpdate: isMap(ru) ? { maxSurge: str(get(ru, 'maxSurge')), maxUnavailable: str(get(ru, 'maxUnavailable')) } : null,
      });
    }
    if (composeLike) {
      const services = root.get('services', true);
      if (!isMap(services)) continue;
      for (const pair of services.items) {
        const service = str(pair.key) ?? '?';
        const hc = get(pair.value, 'healthcheck');
        const test = get(hc, 'test');
        if (!test) continue;
        const text = isSeq(test) ? test.items.map((i) => str(i) ?? '').filter((s) => s !== 'CMD' && s !== 'CMD-SHELL').join(' ') : str(test) ?? '';
        facts.compose.push({ service, test: text, file: rel, line: keyLine(pair.value, 'healthcheck', lc) });
      }
    }
  }
  if (sawManifest && k8sLike) {
    const dir = path.posix.dirname(rel);
    if (!facts.k8sDirs.includes(dir)) facts.k8sDirs.push(dir);
  }
}

function routeFacts(files: WorkspaceFiles, rel: string, facts: DeployFacts): void {
  const r = files.readText(rel, MAX_FILE_BYTES);
  if (!r.ok) return;
  const lines = r.text.split('\n');
  let read = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = HEALTH_LITERAL.exec(line);
    if (!m || CLIENT_CALL.test(line) || !ROUTE_CONTEXT.test(line)) continue;
    read = true;
    if (facts.healthRoutes.some((h) => h.path === m[2] && h.file === rel)) continue;
    facts.healthRoutes.push({ path: m[2]!, file: rel, line: i + 1, text: line.trim().slice(0, 160) });
  }
  if (read) facts.filesRead.push(rel);
}

/** Reads the deployment facts of `workspace` (bounded: at most `limit` files are considered). */
export function deploymentFacts(workspace: string, limit = 5000): DeployFacts {
  const files = new WorkspaceFiles(workspace);
  const facts: DeployFacts = { scripts: [], packageName: null, dockerfiles: [], k8s: [], k8sDirs: [], compose: [], healthRoutes: [], filesRead: [], refused: [] };
  packageFacts(files, facts);
  const listed = walkFiles(files.root, { skipDirs: SKIP_DIRS, limit, onSkip: (rel, why) => { if (why !== 'not a file') facts.refused.push(`${rel}: ${why}, not read`); } });
  for (const rel of listed.sort()) {
    const base = path.posix.basename(rel);
    if (/^Dockerfile(?:\.[\w.-]+)?$/.test(base) || base.endsWith('.Dockerfile')) dockerfileFacts(files, rel, facts);
    else if (/\.ya?ml$/.test(base) && !rel.startsWith('.github/')) yamlFacts(files, rel, facts);
    else if (SOURCE_EXT.test(base) && !TEST_FILE.test(rel) && !/\.d\.ts$/.test(base)) routeFacts(files, rel, facts);
  }
  facts.refused.push(...files.refusalLines());
  return facts;
}

/** One line per fact, `file:line what`, for evidence and the rendered plan. */
export function factLines(f: DeployFacts): string[] {
  return [
    ...f.scripts.map((s) => `${s.file}:${s.line} script "${s.name}": ${s.command}`),
    ...f.dockerfiles.flatMap((d) => [
      ...(d.expose.length ? [`${d.file}:${d.line} EXPOSE ${d.expose.join(' ')}`] : []),
      ...(d.healthcheck ? [`${d.healthcheck.file}:${d.healthcheck.line} HEALTHCHECK ${d.healthcheck.command}`] : []),
    ]),
    ...f.k8s.flatMap((k) => [
      `${k.file}:${k.line} Deployment ${k.name}: ${k.replicas ?? '?'} replica(s), strategy ${k.strategy}`,
      ...k.probes.map((p) => `${p.file}:${p.line} ${p.type}Probe ${p.how}${p.path ? ` ${p.path}` : ''}${p.port ? ` port ${p.port}` : ''}`),
    ]),
    ...f.compose.map((c) => `${c.file}:${c.line} compose service ${c.service} healthcheck: ${c.test}`),
    ...f.healthRoutes.map((h) => `${h.file}:${h.line} health route ${h.path}`),
  ];
}

/** How many distinct kinds of deployment fact were found (for confidence). */
export function factCount(f: DeployFacts): number {
  return f.scripts.length + f.dockerfiles.length + f.k8s.length + f.compose.length + f.healthRoutes.length;
}
