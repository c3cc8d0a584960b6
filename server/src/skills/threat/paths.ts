/**
 * Attack-path search over a described asset graph: simple paths (no node twice, so cycles end)
 * from internet-exposed nodes to high-value nodes, breadth-first so shorter paths come first, with
 * depth and path limits; ranked by hop count, then by risk (sum of vulnerability severities).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { confinedInputFile, parseJsonQuietly } from '../workspace/files';

export interface Vulnerability {
  id: string;
  /** CVSS-like 0..10. */
  severity: number;
}

export interface AssetNode {
  id: string;
  kind: string;
  exposed?: boolean;
  value?: number;
  vulnerabilities?: Vulnerability[];
}

export interface AssetEdge {
  from: string;
  to: string;
  via?: string;
}

export interface AssetGraph {
  nodes: AssetNode[];
  edges: AssetEdge[];
}

export interface AttackPath {
  /** Node ids, entry point first. */
  nodes: string[];
  /** The `via` of each hop. */
  via: string[];
  hops: number;
  /** Sum of vulnerability severities of every node on the path. */
  risk: number;
  target: string;
  targetValue: number;
  vulnerabilities: Array<{ node: string; id: string; severity: number }>;
}

export interface PathOptions {
  /** Nodes with value >= this are targets (default 8); `database`/`secrets` kinds always are. */
  valueThreshold?: number;
  /** Longest path in hops (default 8). */
  maxDepth?: number;
  /** Paths returned at most (default 50). */
  maxPaths?: number;
  /** Partial paths expanded at most, bounding work on dense graphs (default 20000). */
  maxExpansions?: number;
}

export interface PathReport {
  entryPoints: string[];
  targets: string[];
  paths: AttackPath[];
  /** True when a limit stopped the search before it was exhausted. */
  truncated: boolean;
  /** Edges naming an unknown node (ignored). */
  danglingEdges: number;
  nodes: number;
  edges: number;
}

const SEVERITY_WORDS: Record<string, number> = { critical: 9, high: 7, medium: 5, moderate: 5, low: 3, info: 0, none: 0 };
export const TARGET_KINDS = new Set(['database', 'secrets']);

function vulnOf(v: unknown, i: number): Vulnerability | undefined {
  if (typeof v === 'string') return { id: v, severity: SEVERITY_WORDS[v.toLowerCase()] ?? 5 };
  if (typeof v === 'number') return { id: `vuln-${i + 1}`, severity: Math.max(0, Math.min(10, v)) };
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const s = o['severity'] ?? o['cvss'] ?? o['score'];
    const sev = typeof s === 'number' ? Math.max(0, Math.min(10, s)) : typeof s === 'string' ? (SEVERITY_WORDS[s.toLowerCase()] ?? (Number.isFinite(Number(s)) ? Number(s) : 5)) : 5;
    return { id: String(o['id'] ?? o['cve'] ?? `vuln-${i + 1}`), severity: sev };
  }
  return undefined;
}

/** Validates and normalizes a raw graph; undefined when it has no node list. */
export function parseAssetGraph(raw: unknown): AssetGraph | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const o = raw as Record<string, unknown>;
  if (!Array.isArray(o['nodes'])) return undefined;
  const nodes: AssetNode[] = [];
  for (const n of o['nodes'] as unknown[]) {
    if (!n || typeof n !== 'object') continue;
    const r = n as Record<string, unknown>;
    if (r['id'] === undefined) continue;
    const node: AssetNode = { id: String(r['id']), kind: String(r['kind'] ?? 'unknown').toLowerCase() };
    if (r['exposed'] === true) node.exposed = true;
    if (typeof r['value'] === 'number') node.value = r['value'];
    if (Array.isArray(r['vulnerabilities'])) node.vulnerabilities = (r['vulnerabilities'] as unknown[]).map(vulnOf).filter((v): v is Vulnerability => !!v);
    nodes.push(node);
  }
  const edges: AssetEdge[] = [];
  for (const e of Array.isArray(o['edges']) ? (o['edges'] as unknown[]) : []) {
    if (!e || typeof e !== 'object') continue;
    const r = e as Record<string, unknown>;
    if (r['from'] === undefined || r['to'] === undefined) continue;
    edges.push({ from: String(r['from']), to: String(r['to']), ...(r['via'] !== undefined ? { via: String(r['via']) } : {}) });
  }
  return { nodes, edges };
}

/** input.assets (object or path), else `<workspace>/.cadre/assets.json`. */
export function loadAssetGraph(raw: unknown, workspace?: string): { graph?: AssetGraph; pathRead?: string; error?: string } | undefined {
  if (raw && typeof raw === 'object') { const graph = parseAssetGraph(raw); return graph ? { graph } : { error: 'input.assets has no nodes array' }; }
  const given = typeof raw === 'string' && raw.trim() ? raw : workspace ? path.join('.cadre', 'assets.json') : undefined;
  if (!given || !workspace) return undefined;
  let file: string | undefined;
  // Inside the workspace only; a refusal names the path, never its content.
  try { file = confinedInputFile(workspace, given, 'input.assets'); } catch (e) { return { error: (e as Error).message }; }
  if (!file || !existsSync(file)) return undefined;
  try {
    const graph = parseAssetGraph(parseJsonQuietly(readFileSync(file, 'utf8'), `input.assets (${file})`));
    return graph ? { graph, pathRead: file } : { pathRead: file, error: `${file} has no nodes array` };
  } catch (e) { return { pathRead: file, error: (e as Error).message }; }
}

export function isTarget(n: AssetNode, threshold: number): boolean {
  return TARGET_KINDS.has(n.kind) || (n.value ?? 0) >= threshold;
}

export function findAttackPaths(graph: AssetGraph, opts: PathOptions = {}): PathReport {
  const threshold = opts.valueThreshold ?? 8;
  const maxDepth = opts.maxDepth ?? 8;
  const maxPaths = opts.maxPaths ?? 50;
  const maxExpansions = opts.maxExpansions ?? 20000;
  const byId = new Map(graph.nodes.map((n) => [n.id, n] as const));
  const adj = new Map<string, AssetEdge[]>();
  let dangling = 0;
  for (const e of graph.edges) {
    if (!byId.has(e.from) || !byId.has(e.to)) { dangling++; continue; }
    const l = adj.get(e.from) ?? [];
    l.push(e);
    adj.set(e.from, l);
  }
  // An `internet` node is not an asset: what it reaches directly is exposed.
  const exposed = new Set(graph.nodes.filter((n) => n.exposed).map((n) => n.id));
  for (const n of graph.nodes) if (n.kind === 'internet') for (const e of adj.get(n.id) ?? []) exposed.add(e.to);
  const entryPoints = [...exposed].filter((id) => byId.get(id)!.kind !== 'internet');
  const targets = graph.nodes.filter((n) => isTarget(n, threshold)).map((n) => n.id);
  const nodeRisk = (id: string) => (byId.get(id)!.vulnerabilities ?? []).reduce((s, v) => s + v.severity, 0);

  const paths: AttackPath[] = [];
  let truncated = false;
  let expansions = 0;
  type Partial = { nodes: string[]; via: string[]; onPath: Set<string> };
  const queue: Partial[] = entryPoints.map((id) => ({ nodes: [id], via: [], onPath: new Set([id]) }));
  const collectCap = maxPaths * 4; // gather more than returned, then rank
  for (let qi = 0; qi < queue.length; qi++) {
    const p = queue[qi]!;
    const last = p.nodes[p.nodes.length - 1]!;
    const lastNode = byId.get(last)!;
    if (p.nodes.length > 1 && isTarget(lastNode, threshold)) {
      const vulnerabilities = p.nodes.flatMap((id) => (byId.get(id)!.vulnerabilities ?? []).map((v) => ({ node: id, id: v.id, severity: v.severity })));
      paths.push({ nodes: p.nodes, via: p.via, hops: p.nodes.length - 1, risk: Math.round(p.nodes.reduce((s, id) => s + nodeRisk(id), 0) * 10) / 10, target: last, targetValue: lastNode.value ?? 0, vulnerabilities });
      if (paths.length >= collectCap) { truncated = true; break; }
    }
    if (p.nodes.length - 1 >= maxDepth) { if ((adj.get(last) ?? []).some((e) => !p.onPath.has(e.to))) truncated = true; continue; }
    for (const e of adj.get(last) ?? []) {
      if (p.onPath.has(e.to)) continue; // cycle
      if (++expansions > maxExpansions) { truncated = true; break; }
      const onPath = new Set(p.onPath);
      onPath.add(e.to);
      queue.push({ nodes: [...p.nodes, e.to], via: [...p.via, e.via ?? 'edge'], onPath });
    }
    if (expansions > maxExpansions) break;
  }
  // An entry point that is itself a target is a zero-hop exposure.
  for (const id of entryPoints) {
    const n = byId.get(id)!;
    if (isTarget(n, threshold)) paths.push({ nodes: [id], via: [], hops: 0, risk: nodeRisk(id), target: id, targetValue: n.value ?? 0, vulnerabilities: (n.vulnerabilities ?? []).map((v) => ({ node: id, id: v.id, severity: v.severity })) });
  }
  const ranked = rankPaths(paths);
  if (ranked.length > maxPaths) truncated = true;
  return { entryPoints, targets, paths: ranked.slice(0, maxPaths), truncated, danglingEdges: dangling, nodes: graph.nodes.length, edges: graph.edges.length };
}

/** Fewest hops first; equal lengths by higher risk, then higher target value, then ids. */
export function rankPaths(paths: AttackPath[]): AttackPath[] {
  return paths.sort((a, b) => a.hops - b.hops || b.risk - a.risk || b.targetValue - a.targetValue || a.nodes.join('>').localeCompare(b.nodes.join('>')));
}
