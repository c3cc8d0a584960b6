/** threathunter-ai's embedded skills: `hunt` and `attack-paths` (ULTRA), with no network and no model. */
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { maxSeverity } from '../findings/finding';
import { detectAnomalies, loadSeries, type AnomalyReport } from './anomaly';
import { hunt, resolveLogFiles, type HuntResult } from './hunt';
import { loadIndicators, type IndicatorLoad } from './ioc';
import { findAttackPaths, loadAssetGraph, type PathReport } from './paths';
import { proposeReads } from '../read-proposal';

export { TECHNIQUES, decodePowerShell, detectLine, parseLogLine, percentDecode, techniqueFor } from './attack';
export type { DetectionKind, LineSignal, LogFormat, ParsedLine, Technique } from './attack';
export { changePoint, detectAnomalies, loadSeries, parseSeriesCsv } from './anomaly';
export type { Anomaly, AnomalyOptions, AnomalyReport, ChangePoint, SeriesPoint } from './anomaly';
export { findLogFiles, hunt, resolveLogFiles } from './hunt';
export type { Detection, FileStats, HuntOptions, HuntResult } from './hunt';
export { IocMatcher, detectIndicatorType, loadIndicators, parseIndicators } from './ioc';
export type { Indicator, IndicatorLoad, IndicatorType, IocHit } from './ioc';
export { RangeSet, cidrContains, domainSuffixes, normalizeDomain, normalizeUrl, parseCidr, parseIPv4, parseIPv6, parseIp, urlPrefixMatch } from './net';
export type { CidrRange, IpAddr } from './net';
export { findAttackPaths, isTarget, loadAssetGraph, parseAssetGraph, rankPaths } from './paths';
export type { AssetEdge, AssetGraph, AssetNode, AttackPath, PathOptions, PathReport } from './paths';

const clamp = (x: number) => Math.max(0, Math.min(1, Math.round(x * 1000) / 1000));
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() && Number.isFinite(Number(v)) ? Number(v) : undefined);

function rel(file: string, workspace?: string): string {
  if (!workspace) return file;
  const r = file.startsWith(workspace) ? file.slice(workspace.length).replace(/^[\\/]+/, '') : file;
  return r.replace(/\\/g, '/');
}

export interface HuntData {
  findings: HuntResult['findings'];
  detections: HuntResult['detections'];
  anomalies: AnomalyReport['anomalies'];
  changePoint?: AnomalyReport['changePoint'];
  files: HuntResult['files'];
  skipped: HuntResult['skipped'];
  indicators: { loaded: number; rejected: IndicatorLoad['rejected']; origin?: string };
  counts: HuntResult['counts'] & { anomalies: number; seriesPoints: number };
}

interface HuntState { logs: string[]; indicators?: IndicatorLoad; series?: ReturnType<typeof loadSeries> }

/**
 * Confidence of a hunt: how much of the input could be read as a known log format, whether
 * indicators were loaded (without them only the built-in detections ran) and, for anomalies, how
 * long the series is. Never a constant: it moves with the evidence.
 */
export function huntConfidence(r: { lines: number; parsedLines: number; indicators: number; rejected: number; seriesPoints: number; files: number; skipped: number }): number {
  let c = 0.15;
  if (r.lines > 0) c += 0.4 * (r.parsedLines / r.lines) + 0.1 * Math.min(1, r.lines / 50);
  if (r.indicators > 0) c += 0.2 * (r.indicators / (r.indicators + r.rejected));
  if (r.seriesPoints > 0) c += 0.1 * Math.min(1, r.seriesPoints / 30);
  if (r.files + r.skipped > 0) c *= r.files / (r.files + r.skipped);
  return clamp(Math.min(0.95, c));
}

function gather(ctx: SkillContext): HuntState {
  const { input, workspace } = ctx.request;
  const state: HuntState = { logs: resolveLogFiles(input['logs'], workspace) };
  const ind = loadIndicators(input['indicators'], workspace);
  if (ind) state.indicators = ind;
  const s = input['series'] !== undefined ? loadSeries(input['series'], workspace) : undefined;
  if (s) state.series = s;
  return state;
}

function makeHuntSkill(): Skill {
  const states = new WeakMap<Evidence, HuntState>();
  return {
    agentId: 'threathunter-ai',
    action: 'hunt',
    async research(ctx) {
      const ws = ctx.request.workspace;
      const st = gather(ctx);
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      states.set(evidence, st);
      for (const f of st.logs) evidence.items.push({ source: rel(f, ws), detail: 'log file to scan', weight: 0.5 });
      if (st.indicators) {
        evidence.items.push({ source: st.indicators.origin ?? 'indicators', detail: `${st.indicators.indicators.length} indicators loaded, ${st.indicators.rejected.length} rejected`, weight: st.indicators.indicators.length ? 0.7 : 0.1 });
        const p = (st.indicators as { pathRead?: string }).pathRead;
        if (p) evidence.pathsRead.push(rel(p, ws));
      } else evidence.constraints.push('no indicators (input.indicators or .cadre/indicators.json): only built-in detections run');
      if (st.series) {
        evidence.items.push({ source: st.series.pathRead ? rel(st.series.pathRead, ws) : 'input.series', detail: `${st.series.series.length} points`, weight: 0.4 });
        if (st.series.pathRead) evidence.pathsRead.push(rel(st.series.pathRead, ws));
      } else if (ctx.request.input['series'] !== undefined) evidence.constraints.push('input.series could not be read');
      if (!st.logs.length) evidence.constraints.push('no log files (input.logs or *.log in the workspace)');
      evidence.pathsRead.push(...st.logs.map((f) => rel(f, ws)));
      ctx.progress(30);
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeReads(evidence, 'read log files, indicators and event counts');
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const st = states.get(evidence) ?? gather(ctx);
      const { input, workspace } = ctx.request;
      const seriesPoints = st.series?.series.length ?? 0;
      if (!st.logs.length && !seriesPoints) {
        const why = st.indicators?.indicators.length
          ? 'indicators were loaded but there are no log files to hunt in (input.logs or *.log in the workspace) and no event-count series (input.series)'
          : 'nothing to hunt in: no log files (input.logs or *.log in the workspace), no indicators (input.indicators or .cadre/indicators.json) and no event-count series (input.series)';
        // Nothing to hunt in is "nothing to do", not a failure of the agent: the step is skipped with
        // its reason and the execution goes on (issue 10's outcome model: not_applicable).
        return { kind: 'threat-hunt', summary: `threathunter-ai hunt: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why };
      }
      const sudo = Array.isArray(input['sudoUsers']) ? (input['sudoUsers'] as unknown[]).map(String) : undefined;
      const bf = num(input['bruteForceThreshold']);
      const result = hunt(st.logs, st.indicators?.indicators ?? [], { signal: ctx.signal, ...(bf !== undefined ? { bruteForceThreshold: bf } : {}), ...(sudo ? { sudoUsers: sudo } : {}) }, workspace);
      ctx.progress(80);
      const win = num(input['window']);
      const thr = num(input['zThreshold']);
      const anomalies = seriesPoints ? detectAnomalies(st.series!.series, { ...(win !== undefined ? { window: win } : {}), ...(thr !== undefined ? { threshold: thr } : {}) }) : undefined;
      const c = result.counts;
      const confidence = huntConfidence({ lines: c.lines, parsedLines: c.parsedLines, indicators: c.indicators, rejected: st.indicators?.rejected.length ?? 0, seriesPoints, files: c.files, skipped: result.skipped.length });
      const data: HuntData = {
        findings: result.findings, detections: result.detections, anomalies: anomalies?.anomalies ?? [],
        ...(anomalies?.changePoint ? { changePoint: anomalies.changePoint } : {}),
        files: result.files, skipped: result.skipped,
        indicators: { loaded: c.indicators, rejected: st.indicators?.rejected ?? [], ...(st.indicators?.origin ? { origin: rel(st.indicators.origin, workspace) } : {}) },
        counts: { ...c, anomalies: anomalies?.anomalies.length ?? 0, seriesPoints },
      };
      const techniques = Object.keys(c.byTechnique).sort();
      const summary = `${c.iocHits} indicator hit(s), ${c.detections} detection(s)${techniques.length ? ` [${techniques.join(', ')}]` : ''}, ${data.counts.anomalies} anomal${data.counts.anomalies === 1 ? 'y' : 'ies'}${data.changePoint ? ', a mean shift' : ''} over ${c.lines} line(s) in ${c.files} file(s) with ${c.indicators} indicator(s)`;
      const artifact: Artifact = {
        kind: 'threat-hunt', summary, goalRef, confidence, data, text: renderHunt(data),
        findingsAfter: { count: c.iocHits + c.detections, maxSeverity: maxSeverity([...result.findings, ...result.detections]) },
        tokens: 0,
      };
      ctx.progress(100, confidence);
      return artifact;
    },
  };
}

export function renderHunt(d: HuntData): string {
  const out = [`# Threat hunt`, '', `${d.counts.lines} lines in ${d.counts.files} files (${d.counts.parsedLines} parsed), ${d.counts.indicators} indicators.`, ''];
  if (d.detections.length) {
    out.push('## Detections', '');
    for (const x of d.detections) out.push(`- [${x.severity}] ${x.technique.id} ${x.technique.name} — ${x.file}:${x.range.startLine}: ${x.message}`);
    out.push('');
  }
  if (d.findings.length) {
    out.push('## Indicator hits', '');
    for (const f of d.findings.slice(0, 200)) out.push(`- [${f.severity}] ${f.ruleId} ${f.file}:${f.range.startLine}: ${f.message}`);
    if (d.findings.length > 200) out.push(`- … ${d.findings.length - 200} more`);
    out.push('');
  }
  if (d.anomalies.length || d.changePoint) {
    out.push('## Anomalies', '');
    for (const a of d.anomalies) out.push(`- t=${a.t}: ${a.value} (expected ${a.expected}, z=${a.z})`);
    if (d.changePoint) out.push(`- mean shift at t=${d.changePoint.t}: ${d.changePoint.meanBefore} → ${d.changePoint.meanAfter} (t=${d.changePoint.score})`);
  }
  return out.join('\n');
}

function makeAttackPathsSkill(): Skill {
  return {
    agentId: 'threathunter-ai',
    action: 'attack-paths',
    async research(ctx) {
      const ws = ctx.request.workspace;
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const g = loadAssetGraph(ctx.request.input['assets'], ws);
      if (g?.pathRead) evidence.pathsRead.push(rel(g.pathRead, ws));
      if (g?.graph) evidence.items.push({ source: g.pathRead ? rel(g.pathRead, ws) : 'input.assets', detail: `${g.graph.nodes.length} nodes, ${g.graph.edges.length} edges`, weight: 0.7 });
      else evidence.constraints.push(g?.error ?? 'no asset graph (input.assets or .cadre/assets.json)');
      if (ctx.request.tier !== 'ultra') evidence.constraints.push(`attack-path-analysis is an ULTRA feature; tier ${ctx.request.tier} gets a preview`);
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeReads(evidence, 'read the asset graph');
    },
    async generate(ctx, _evidence) {
      const goalRef = ctx.request.goal.id;
      const { input, workspace, tier } = ctx.request;
      const g = loadAssetGraph(input['assets'], workspace);
      if (!g?.graph || !g.graph.nodes.length) {
        const why = g?.error ?? 'no asset graph to analyze: give input.assets ({nodes, edges}) or a path to it, or add .cadre/assets.json to the workspace';
        return { kind: 'attack-paths', summary: `threathunter-ai attack-paths: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why };
      }
      const opts = {
        ...(num(input['valueThreshold']) !== undefined ? { valueThreshold: num(input['valueThreshold'])! } : {}),
        ...(num(input['maxDepth']) !== undefined ? { maxDepth: num(input['maxDepth'])! } : {}),
        ...(num(input['maxPaths']) !== undefined ? { maxPaths: num(input['maxPaths'])! } : {}),
      };
      const report: PathReport = findAttackPaths(g.graph, opts);
      const known = g.graph.nodes.filter((n) => n.kind !== 'unknown').length / g.graph.nodes.length;
      const resolved = report.edges ? 1 - report.danglingEdges / report.edges : 0;
      const confidence = clamp(Math.min(0.95, 0.3 + 0.25 * known + 0.25 * resolved + (report.entryPoints.length && report.targets.length ? 0.15 : 0) - (report.truncated ? 0.1 : 0)));
      const counts = { nodes: report.nodes, edges: report.edges, entryPoints: report.entryPoints.length, targets: report.targets.length, paths: report.paths.length, danglingEdges: report.danglingEdges };
      if (tier !== 'ultra') {
        const shortest = report.paths[0]?.hops;
        const why = `attack-paths requires the ULTRA feature attack-path-analysis (this request is tier ${tier})`;
        return {
          kind: 'attack-paths-preview', goalRef, confidence,
          summary: `preview: ${counts.paths} attack path(s) from ${counts.entryPoints} exposed node(s) to ${counts.targets} high-value node(s)${shortest !== undefined ? `, shortest ${shortest} hop(s)` : ''}; the paths themselves need ULTRA`,
          data: { preview: true, requires: { tier: 'ultra', feature: 'attack-path-analysis' }, reason: why, counts, shortestHops: shortest ?? null, maxRisk: report.paths.reduce((m, p) => Math.max(m, p.risk), 0), truncated: report.truncated },
          tokens: 0,
        };
      }
      const top = report.paths[0];
      const summary = top
        ? `${counts.paths} attack path(s) from ${counts.entryPoints} exposed node(s) to ${counts.targets} high-value node(s); top: ${top.nodes.join(' → ')} (${top.hops} hop(s), risk ${top.risk})`
        : `no attack path from ${counts.entryPoints} exposed node(s) to ${counts.targets} high-value node(s)`;
      const text = ['# Attack paths', '', ...report.paths.map((p, i) => `${i + 1}. ${p.nodes.map((n, j) => (j ? `-[${p.via[j - 1]}]-> ${n}` : n)).join(' ')} (hops ${p.hops}, risk ${p.risk})`)].join('\n');
      return { kind: 'attack-paths', summary, goalRef, confidence, data: { paths: report.paths, entryPoints: report.entryPoints, targets: report.targets, truncated: report.truncated, counts }, text, tokens: 0 };
    },
  };
}

export const huntSkill: Skill = makeHuntSkill();
export const attackPathsSkill: Skill = makeAttackPathsSkill();
export const threatSkills: Skill[] = [huntSkill, attackPathsSkill];
