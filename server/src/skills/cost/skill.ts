/**
 * cost-ai's embedded skills [PRO], read-only and deterministic (no model, no network):
 *
 *  - `report` (the default action): totals of the period and the breakdown by service, tag, resource,
 *    charge type and day or month (report.ts).
 *  - `optimize`: waste (idle, unattached addresses and volumes, oversized), rightsizing and the
 *    reserved-capacity break-even with its arithmetic (optimize.ts).
 *
 * The exports are read through load.ts (confined to the workspace). No export at all is not applicable
 * (with where it looked); a named file that is no export, or a row that cannot be read, is needs input
 * naming the file and line. Waste is a finding of the bill, never a failed gate of the step.
 */
import { existsSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { WorkspaceFiles } from '../workspace/files';
import { loadExports, LOOKED_AT, type LoadedExports } from './load';
import { DEFAULT_OPTIONS, optimize, renderOptimize, type OptimizeOptions, type OptimizeResult, type ReservedOffer } from './optimize';
import { buildReport, money, renderReport, type CostReport } from './report';
import { optimizeDataSchema, reportDataSchema } from './schemas';
import { costInputSchema } from '../operate-inputs';

export interface CostSource { files: LoadedExports['files']; ignored: string[]; origin: LoadedExports['origin'] }
export type ReportData = CostReport & { source: CostSource };
export type OptimizeData = OptimizeResult & { source: CostSource };

const RANK = { high: 3, medium: 2, low: 1 } as const;

/** A workspace JSON or YAML file (input given as a path) or the value itself. */
function valueOrFile(ws: string, field: string, raw: unknown): { value: unknown; from: string } | { error: string } {
  if (typeof raw !== 'string') return { value: raw, from: `input.${field}` };
  const files = new WorkspaceFiles(ws);
  const r = files.readText(raw, 4 * 1024 * 1024);
  if (!r.ok) return { error: r.reason === 'not found' ? `input.${field}: ${raw} does not exist in the workspace` : `input.${field}: ${raw} is ${r.reason}; not read` };
  try { return { value: parseYaml(r.text), from: r.rel }; } catch (e) {
    const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    return { error: `${r.rel}${line ? `:${line}` : ''}: not valid JSON or YAML` };
  }
}

/** The optimize options from the input: thresholds, utilisation per resource, reserved offers. */
export function optionsOf(ws: string, input: Record<string, unknown>): OptimizeOptions | { error: string; field: string } {
  const o: OptimizeOptions = { ...DEFAULT_OPTIONS, utilization: {}, reservations: [] };
  for (const k of ['idleUsage', 'minMonthlyCost', 'utilizationBelow', 'targetUtilization'] as const) {
    const v = input[k];
    if (v === undefined || v === null || v === '') continue;
    const n = typeof v === 'string' ? Number(v) : v; // the GET form gives strings
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || (k !== 'idleUsage' && k !== 'minMonthlyCost' && (n <= 0 || n > 100))) {
      return { error: `input.${k} must be a ${k === 'idleUsage' || k === 'minMonthlyCost' ? 'non-negative number' : 'percent (0..100]'}`, field: k };
    }
    o[k] = n;
  }
  if (input['utilization'] !== undefined && input['utilization'] !== null) {
    const u = valueOrFile(ws, 'utilization', input['utilization']);
    if ('error' in u) return { error: u.error, field: 'utilization' };
    if (!u.value || typeof u.value !== 'object' || Array.isArray(u.value)) return { error: `${u.from} must map resource ids to a utilisation percent ({"i-0abc": 7.5})`, field: 'utilization' };
    for (const [res, p] of Object.entries(u.value)) {
      if (typeof p !== 'number' || p < 0 || p > 100) return { error: `${u.from}: ${res} must be a percent (0..100)`, field: 'utilization' };
      o.utilization[res] = p;
    }
  }
  if (input['reservations'] !== undefined && input['reservations'] !== null) {
    const r = valueOrFile(ws, 'reservations', input['reservations']);
    if ('error' in r) return { error: r.error, field: 'reservations' };
    const list = Array.isArray(r.value) ? r.value : (r.value as { reservations?: unknown } | null)?.reservations;
    if (!Array.isArray(list)) return { error: `${r.from} must be a list of {instanceType, upfront, hourly, termMonths}`, field: 'reservations' };
    for (const [i, x] of list.entries()) {
      const e = x as Partial<ReservedOffer>;
      if (!e || typeof e.instanceType !== 'string' || !e.instanceType || typeof e.upfront !== 'number' || e.upfront < 0 || typeof e.hourly !== 'number' || e.hourly < 0
        || typeof e.termMonths !== 'number' || !(e.termMonths > 0)) {
        return { error: `${r.from}[${i}] must be {instanceType, upfront >= 0, hourly >= 0, termMonths > 0}`, field: 'reservations' };
      }
      o.reservations.push({ instanceType: e.instanceType, upfront: e.upfront, hourly: e.hourly, termMonths: e.termMonths });
    }
  }
  return o;
}

/** Calibrated on the evidence: a complete parse is confident; every part of optimize left unjudged for want of input lowers it. */
export function costConfidence(action: 'report' | 'optimize', notJudged = 0): number {
  return action === 'report' ? 0.9 : Math.max(0.75, Math.round((0.9 - 0.05 * notJudged) * 100) / 100);
}

function examinedLine(d: LoadedExports): string {
  return `${d.lines.length} line(s) in ${d.files.length} export(s) (${d.files.map((f) => `${f.file}: ${f.format}`).join(', ')})`;
}

function makeCostSkill(action: 'report' | 'optimize'): Skill {
  const prepared = new WeakMap<Evidence, LoadedExports>();
  const kind = action === 'report' ? 'cost-report' : 'cost-optimization';
  return {
    agentId: 'cost-ai',
    action,
    inputSchema: costInputSchema,
    needs: ['workspace'],
    outputSchema: action === 'report' ? reportDataSchema : optimizeDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to read billing exports from'); return evidence; }
      const d = loadExports(ws, ctx.request.input);
      prepared.set(evidence, d);
      for (const f of d.files) evidence.items.push({ source: f.file, detail: `${f.format}: ${f.records} line(s)${f.tagKeys.length ? `, tags ${f.tagKeys.join(', ')}` : ''}`, weight: 0.8 });
      evidence.pathsRead.push(...d.files.map((f) => f.file));
      evidence.constraints.push(...d.refused, ...(d.problem ? [d.problem.message] : []));
      ctx.progress(40, d.files.length ? 0.6 : 0.3);
      return evidence;
    },
    propose(_ctx, evidence) {
      const d = prepared.get(evidence);
      return d?.files.length ? [{ kind: 'read', description: 'read the billing exports', paths: d.files.map((f) => f.file) }] : [];
    },
    async generate(ctx: SkillContext, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `cost-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to read billing exports from', 'source');
      const d = prepared.get(evidence) ?? loadExports(ws, ctx.request.input);
      if (d.problem) return unable(d.problem.message, d.problem.field);
      if (!d.lines.length) {
        const why = d.files.length ? `the export(s) ${d.files.map((f) => f.file).join(', ')} hold no line` : `no billing export found: looked for ${LOOKED_AT}`;
        return { kind, summary: `cost-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      // Amounts in different currencies do not add up: the request must pick one currency's exports.
      const currencies = [...new Set(d.lines.map((l) => l.currency).filter((c): c is string => !!c))].sort();
      if (currencies.length > 1) {
        const where = currencies.map((c) => { const l = d.lines.find((x) => x.currency === c)!; return `${c} (first at ${l.file}:${l.line})`; }).join(', ');
        return unable(`the exports mix currencies: ${where}; name one currency's exports in input.export`, 'export');
      }
      const source: CostSource = { files: d.files, ignored: d.ignored, origin: d.origin };
      if (action === 'report') {
        const topRaw = ctx.request.input['top'];
        const top = topRaw === undefined ? 20 : Number(topRaw);
        if (!Number.isInteger(top) || top < 1 || top > 1000) return unable('input.top must be a whole number of resources, 1..1000', 'top');
        const r = buildReport(d.lines, d.files.length, top);
        const data: ReportData = { ...r, source };
        const confidence = costConfidence('report');
        ctx.progress(100, confidence);
        const m = (n: number) => money(n, r.currency);
        const summary = `total ${m(r.total)} over ${r.period.start} .. ${r.period.end} (${r.period.days} day(s)): ${r.byService.slice(0, 3).map((s) => `${s.key} ${m(s.cost)}`).join(', ')}${r.byService.length > 3 ? `, and ${r.byService.length - 3} more service(s)` : ''}; top resource ${r.byResource[0] ? `${r.byResource[0].resource} ${m(r.byResource[0].cost)}` : 'none'}; examined ${examinedLine(d)}`;
        return { kind, summary, goalRef, confidence, data, text: renderReport(r), tokens: 0, findingsAfter: { count: 0, maxSeverity: 0 } };
      }
      const opts = optionsOf(ws, ctx.request.input);
      if ('error' in opts) return unable(opts.error, opts.field);
      const o = optimize(d.lines, opts);
      const data: OptimizeData = { ...o, source };
      const confidence = costConfidence('optimize', o.notJudged.length);
      ctx.progress(100, confidence);
      const m = (n: number) => money(n, o.currency);
      const worth = o.reservations.filter((r) => r.worthIt);
      const n = o.waste.length + worth.length;
      const summary = n
        ? `${o.waste.length} waste finding(s)${o.waste.length ? `: ${o.waste.slice(0, 3).map((w) => `${w.kind} ${w.resource} ${m(w.monthlyCost)}/month (${w.file}:${w.lines[0]})`).join('; ')}` : ''}${o.rightsizing.length ? `; rightsize ${o.rightsizing.map((r) => `${r.resource} -> ${r.suggested ?? 'smaller'}`).join(', ')}` : ''}${worth.length ? `; reserve ${worth.map((r) => `${r.instanceType} (break-even ${r.breakEvenMonths} months)`).join(', ')}` : ''}; about ${m(o.estimatedMonthlySaving)}/month to save; examined ${examinedLine(d)}`
        : `nothing found: no idle, unattached or oversized resource${o.reservations.some((r) => r.worthIt === false) ? ' and no reservation worth it' : ''}; examined ${examinedLine(d)}, ${o.examined.resources} resource(s)${o.notJudged.length ? `; not judged: ${o.notJudged.join('; ')}` : ''}`;
      const sev = [...o.waste.map((w) => RANK[w.severity]), ...worth.map(() => 1)];
      return { kind, summary, goalRef, confidence, data, text: renderOptimize(o), tokens: 0, findingsAfter: { count: n, maxSeverity: sev.reduce((x, y) => Math.max(x, y), 0) } };
    },
  };
}

export const reportSkill: Skill = makeCostSkill('report');
export const optimizeSkill: Skill = makeCostSkill('optimize');
export type { OptimizeResult, CostReport };
