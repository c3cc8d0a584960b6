/**
 * cost-ai `optimize`: what the exports show is paid for and not used, what is bigger than its load,
 * and where reserved capacity pays for itself. Every figure comes with its arithmetic.
 *
 *  - Idle: a resource that cost something (>= `minMonthlyCost` a month) while the lines that measure
 *    consumption (requests, bytes, LCUs, anything but hours and storage-months) sum to ~zero
 *    (<= `idleUsage`), or while every line's usage is ~zero.
 *  - Unattached IP: AWS bills an address attached to nothing as `ElasticIP:IdleAddress` /
 *    `PublicIPv4:IdleAddress`; GCP's unused static address SKU says "Static Ip Charge" or "unused".
 *  - Unattached volume: a block volume (`VolumeUsage`, `PD Capacity`) whose I/O lines sum to zero, or
 *    tagged `state=available|unattached`; a volume with no I/O line in the export is not judged (the
 *    export does not say whether it is attached) and counted as such.
 *  - Oversized: average utilisation under `utilizationBelow` percent, from the export (generic
 *    `utilization`) or `input.utilization` ({resource: percent}); without it oversizing is not judged.
 *  - Rightsizing: for an oversized instance, the smallest size of its family (AWS size normalization
 *    factors, which price scales with inside a family; GCP machine types by vCPUs) that keeps the load
 *    under `targetUtilization`; saving = monthly cost x (1 - new factor / old factor).
 *  - Reserved break-even: per instance type running on demand, the observed hourly rate (cost / hours)
 *    against a reserved offer of `input.reservations` ({instanceType, upfront, hourly, termMonths}):
 *    monthly saving = (on-demand hourly x running share - reserved hourly) x 730 h, months to break
 *    even = upfront / monthly saving. Offers are never invented: without one the candidates are listed.
 *
 * Monthly figures scale the period's cost to 730 hours (cost x 730 / hours in the period).
 */
import type { CostLine } from './formats';
import { currencyOf, money, periodOf, round } from './report';

export const HOURS_PER_MONTH = 730;

export interface OptimizeOptions {
  idleUsage: number;
  minMonthlyCost: number;
  utilizationBelow: number;
  targetUtilization: number;
  utilization: Record<string, number>;
  reservations: ReservedOffer[];
}

export const DEFAULT_OPTIONS: OptimizeOptions = { idleUsage: 0.01, minMonthlyCost: 1, utilizationBelow: 20, targetUtilization: 50, utilization: {}, reservations: [] };

export interface ReservedOffer {
  /** The instance type (m5.xlarge) or usage type the offer is for. */
  instanceType: string;
  upfront: number;
  hourly: number;
  termMonths: number;
}

export type WasteKind = 'idle' | 'unattached-ip' | 'unattached-volume' | 'oversized';

export interface Waste {
  kind: WasteKind;
  resource: string;
  service: string;
  cost: number;
  monthlyCost: number;
  evidence: string;
  file: string;
  lines: number[];
  severity: 'high' | 'medium' | 'low';
}

export interface Rightsizing {
  resource: string;
  instanceType: string | null;
  utilization: number;
  suggested: string | null;
  monthlyCost: number;
  estimatedMonthlySaving: number;
  arithmetic: string;
}

export interface Reservation {
  instanceType: string;
  service: string;
  resources: string[];
  hours: number;
  onDemandCost: number;
  onDemandHourly: number;
  /** Hours run / (resources x hours in the period). */
  runningShare: number;
  offer: ReservedOffer | null;
  monthlySaving: number | null;
  breakEvenMonths: number | null;
  termSaving: number | null;
  worthIt: boolean | null;
  arithmetic: string;
}

export interface OptimizeResult {
  currency: string | null;
  period: { start: string; end: string; days: number };
  waste: Waste[];
  rightsizing: Rightsizing[];
  reservations: Reservation[];
  /** What could not be judged from the input, and why. */
  notJudged: string[];
  thresholds: Omit<OptimizeOptions, 'utilization' | 'reservations'>;
  examined: { lines: number; resources: number; withUtilization: number; volumes: number; offers: number };
  estimatedMonthlySaving: number;
}

const HOUR_UNIT = /^(hrs?|hours?|h|hour)$/i;
const TIME_UNIT = /^(hrs?|hours?|h|hour|seconds?|s|vcpu-hours?)$/i;
const ALLOCATION_UNIT = /(gb|gib|gibibyte|byte)[- ]?(mo|month|months|seconds?)|gibibyte month/i;
const IP_USAGE = /IdleAddress|Static Ip Charge|unused (static )?ip/i;
const VOLUME_USAGE = /VolumeUsage|PD Capacity/i;
const VOLUME_IO = /VolumeIOUsage|Read.?Ops|Write.?Ops|IO Requests|PD (Read|Write)/i;
const NOT_USAGE_CHARGE = /^(tax|credit|refund|discount|bundleddiscount|edpdiscount|privaterateDiscount|rifee|fee|savingsplannegation|adjustment|rounding_error)$/i;

/** AWS size normalization factors (RI size flexibility): price within a family scales with them. */
const AWS_SIZES: Record<string, number> = {
  nano: 0.25, micro: 0.5, small: 1, medium: 2, large: 4, xlarge: 8, '2xlarge': 16, '3xlarge': 24, '4xlarge': 32, '6xlarge': 48, '8xlarge': 64,
  '9xlarge': 72, '10xlarge': 80, '12xlarge': 96, '16xlarge': 128, '18xlarge': 144, '24xlarge': 192, '32xlarge': 256, '48xlarge': 384,
};

type Usage = 'time' | 'allocation' | 'consumption';
function usageClass(l: CostLine): Usage {
  const u = l.unit ?? '';
  if (TIME_UNIT.test(u.trim()) || /BoxUsage|Hours?$|-Hours|NodeUsage|InstanceUsage|LoadBalancerUsage|NatGateway-Hours/i.test(l.usageType ?? '')) return 'time';
  if (ALLOCATION_UNIT.test(u) || VOLUME_USAGE.test(l.usageType ?? '')) return 'allocation';
  return 'consumption';
}

const severityOf = (monthly: number): Waste['severity'] => (monthly >= 1000 ? 'high' : monthly >= 100 ? 'medium' : 'low');

/** A smaller size of the same family that keeps the load under the target, with its price factor. */
export function smallerSize(instanceType: string, utilization: number, target: number): { type: string; factor: number; from: number; to: number } | null {
  const need = utilization / target; // the share of today's capacity the load needs
  const aws = /^((?:db\.|cache\.)?[a-z][a-z0-9-]*)\.([a-z0-9]+)$/.exec(instanceType);
  if (aws && AWS_SIZES[aws[2]!] !== undefined) {
    const from = AWS_SIZES[aws[2]!]!;
    // Burstable families (t2, t3, t4g) go down to nano; most others start at large, so nothing smaller is offered.
    const floor = /^(?:db\.|cache\.)?t\d/.test(aws[1]!) ? 0 : AWS_SIZES['large']!;
    const fits = Object.entries(AWS_SIZES).filter(([, f]) => f < from && f >= from * need && f >= floor).sort((a, b) => a[1] - b[1]);
    return fits[0] ? { type: `${aws[1]}.${fits[0][0]}`, factor: fits[0][1] / from, from, to: fits[0][1] } : null;
  }
  const gcp = /^([a-z][a-z0-9]*-[a-z]+(?:-[a-z]+)?)-(\d+)$/.exec(instanceType);
  if (gcp) {
    const from = Number(gcp[2]);
    const fits = [1, 2, 4, 8, 16, 32, 48, 64, 80, 96].filter((v) => v < from && v >= from * need);
    return fits[0] ? { type: `${gcp[1]}-${fits[0]}`, factor: fits[0] / from, from, to: fits[0] } : null;
  }
  return null;
}

interface ResourceFacts {
  resource: string; service: string; cost: number; file: string; lines: number[]; all: CostLine[];
  instanceType: string | null; utilization: number[];
}

export function optimize(lines: readonly CostLine[], opts: OptimizeOptions): OptimizeResult {
  const period = periodOf(lines);
  const cur = currencyOf(lines);
  const m = (n: number) => money(n, cur);
  const periodHours = period.days * 24;
  const toMonth = (cost: number) => (periodHours ? (cost * HOURS_PER_MONTH) / periodHours : 0);
  const byRes = new Map<string, ResourceFacts>();
  for (const l of lines) {
    if (!l.resource || NOT_USAGE_CHARGE.test(l.chargeType ?? '')) continue;
    const r = byRes.get(l.resource) ?? { resource: l.resource, service: l.service, cost: 0, file: l.file, lines: [], all: [], instanceType: null, utilization: [] };
    r.cost += l.cost;
    r.all.push(l);
    if (r.lines.length < 5 && r.file === l.file) r.lines.push(l.line);
    if (l.instanceType && !r.instanceType) r.instanceType = l.instanceType;
    if (l.utilization !== null) r.utilization.push(l.utilization);
    byRes.set(l.resource, r);
  }
  const waste: Waste[] = []; const rightsizing: Rightsizing[] = []; const notJudged: string[] = [];
  let volumes = 0; let volumesUnjudged = 0; let withUtil = 0;
  const iu = opts.idleUsage;
  for (const r of byRes.values()) {
    const monthly = toMonth(r.cost);
    const base = { resource: r.resource, service: r.service, cost: round(r.cost), monthlyCost: round(monthly, 2), file: r.file, lines: r.lines, severity: severityOf(monthly) };
    const ipLines = r.all.filter((l) => IP_USAGE.test(l.usageType ?? ''));
    if (ipLines.length) {
      const c = ipLines.reduce((a, l) => a + l.cost, 0);
      if (c > 0) {
        waste.push({ ...base, kind: 'unattached-ip', evidence: `billed as ${[...new Set(ipLines.map((l) => l.usageType))].join(', ')} (an address attached to nothing): ${m(c)} in the period, ${m(toMonth(c))}/month`, lines: ipLines.slice(0, 5).map((l) => l.line) });
        continue;
      }
    }
    const isVolume = r.all.some((l) => VOLUME_USAGE.test(l.usageType ?? ''));
    if (isVolume) {
      volumes++;
      const io = r.all.filter((l) => VOLUME_IO.test(l.usageType ?? ''));
      const state = (r.all.find((l) => l.tags['state'] ?? l.tags['status'])?.tags['state'] ?? r.all.find((l) => l.tags['status'])?.tags['status'] ?? '').toLowerCase();
      const ioSum = io.reduce((a, l) => a + (l.usage ?? 0), 0);
      if (/^(available|unattached|detached)$/.test(state)) {
        waste.push({ ...base, kind: 'unattached-volume', evidence: `tagged state=${state}: ${m(r.cost)} in the period, ${m(monthly)}/month for storage nothing mounts` });
        continue;
      }
      if (io.length && ioSum <= iu && monthly >= opts.minMonthlyCost) {
        waste.push({ ...base, kind: 'unattached-volume', evidence: `no I/O in the period (${io.length} I/O line(s), ${round(ioSum)} ${io[0]!.unit ?? 'ops'}) while its capacity cost ${m(r.cost)} (${m(monthly)}/month): unattached or unused` });
        continue;
      }
      if (!io.length) volumesUnjudged++;
      continue;
    }
    const known = r.all.filter((l) => l.usage !== null);
    const consumption = known.filter((l) => usageClass(l) === 'consumption');
    const consumed = consumption.reduce((a, l) => a + l.usage!, 0);
    const allZero = known.length > 0 && known.length === r.all.length && known.every((l) => Math.abs(l.usage!) <= iu);
    if (monthly >= opts.minMonthlyCost && ((consumption.length && consumed <= iu) || allZero)) {
      const what = consumption.length && consumed <= iu
        ? `${[...new Set(consumption.map((l) => `${l.usageType ?? 'usage'} (${l.unit ?? 'units'})`))].slice(0, 3).join(', ')} summed to ${round(consumed)} over ${consumption.length} line(s)`
        : `usage was ~0 on all ${known.length} line(s)`;
      waste.push({ ...base, kind: 'idle', evidence: `cost ${m(r.cost)} in the period (${m(monthly)}/month) while ${what}` });
      continue;
    }
    const util = opts.utilization[r.resource] ?? (r.utilization.length ? r.utilization.reduce((a, b) => a + b, 0) / r.utilization.length : undefined);
    if (util === undefined) continue;
    withUtil++;
    if (util < opts.utilizationBelow) {
      const u = round(util, 1);
      waste.push({ ...base, kind: 'oversized', evidence: `average utilisation ${u}% (under ${opts.utilizationBelow}%) ${opts.utilization[r.resource] !== undefined ? 'from input.utilization' : `over ${r.utilization.length} line(s) of the export`}, for ${m(monthly)}/month` });
      const s = r.instanceType ? smallerSize(r.instanceType, util, opts.targetUtilization) : null;
      if (s) {
        const saving = monthly * (1 - s.factor);
        rightsizing.push({
          resource: r.resource, instanceType: r.instanceType, utilization: u, suggested: s.type, monthlyCost: round(monthly, 2), estimatedMonthlySaving: round(saving, 2),
          arithmetic: `${u}% of ${r.instanceType} (size factor ${s.from}) needs a size factor of ${round((s.from * util) / opts.targetUtilization, 2)} at a ${opts.targetUtilization}% target: ${s.type} (factor ${s.to}) fits; saving = ${m(monthly)}/month x (1 - ${s.to}/${s.from}) = ${m(saving)}/month`,
        });
      } else {
        const keep = Math.min(1, util / opts.targetUtilization);
        const saving = monthly * (1 - keep);
        rightsizing.push({
          resource: r.resource, instanceType: r.instanceType, utilization: u, suggested: null, monthlyCost: round(monthly, 2), estimatedMonthlySaving: round(saving, 2),
          arithmetic: `${u}% busy at a ${opts.targetUtilization}% target needs ${round(keep * 100, 1)}% of today's capacity${r.instanceType ? ` (no smaller known size of ${r.instanceType})` : ' (no instance type in the export)'}; at a price proportional to capacity, saving = ${m(monthly)}/month x (1 - ${round(keep, 3)}) = ${m(saving)}/month`,
        });
      }
    }
  }
  if (volumesUnjudged) notJudged.push(`${volumesUnjudged} volume(s) with no I/O line in the export: whether they are attached is not in it`);
  if (!withUtil) notJudged.push('oversizing: no utilisation given (a generic `utilization` column or input.utilization {resource: percent})');
  const reservations = reserve(lines, byRes, opts, periodHours, m);
  if (!opts.reservations.length && reservations.length) notJudged.push('reserved break-even: no reserved offer given (input.reservations [{instanceType, upfront, hourly, termMonths}]); the on-demand rates are listed');
  const idleRes = new Set(waste.map((w) => w.resource));
  for (const r of reservations) if (r.resources.some((x) => idleRes.has(x))) r.arithmetic += '; some of these resources are idle or oversized: fix that before reserving';
  waste.sort((a, b) => b.monthlyCost - a.monthlyCost || a.resource.localeCompare(b.resource));
  rightsizing.sort((a, b) => b.estimatedMonthlySaving - a.estimatedMonthlySaving);
  const saving = waste.filter((w) => w.kind !== 'oversized').reduce((a, w) => a + w.monthlyCost, 0) + rightsizing.reduce((a, r) => a + r.estimatedMonthlySaving, 0)
    + reservations.filter((r) => r.worthIt).reduce((a, r) => a + (r.monthlySaving ?? 0) * r.resources.length, 0);
  return {
    currency: cur, period, waste, rightsizing, reservations, notJudged,
    thresholds: { idleUsage: opts.idleUsage, minMonthlyCost: opts.minMonthlyCost, utilizationBelow: opts.utilizationBelow, targetUtilization: opts.targetUtilization },
    examined: { lines: lines.length, resources: byRes.size, withUtilization: withUtil, volumes, offers: opts.reservations.length },
    estimatedMonthlySaving: round(saving, 2),
  };
}

/** On-demand instance hours per instance type, and the break-even of a reserved offer for one of them. */
function reserve(lines: readonly CostLine[], byRes: Map<string, ResourceFacts>, opts: OptimizeOptions, periodHours: number, m: (n: number) => string): Reservation[] {
  const groups = new Map<string, { service: string; resources: Set<string>; hours: number; cost: number }>();
  for (const l of lines) {
    // Instance hours only: GCP bills cores and memory by the second (committed use discounts are per vCPU and GB, not covered).
    if (!l.resource || !l.instanceType || l.usage === null || !HOUR_UNIT.test((l.unit ?? '').trim()) || NOT_USAGE_CHARGE.test(l.chargeType ?? '')) continue;
    if (l.pricingTerm && !/^on.?demand$/i.test(l.pricingTerm)) continue;
    const hours = l.usage;
    const g = groups.get(l.instanceType) ?? { service: l.service, resources: new Set<string>(), hours: 0, cost: 0 };
    g.resources.add(l.resource); g.hours += hours; g.cost += l.cost;
    groups.set(l.instanceType, g);
  }
  const out: Reservation[] = [];
  for (const [type, g] of [...groups].sort((a, b) => b[1].cost - a[1].cost)) {
    if (!(g.hours > 0) || !byRes.size) continue;
    const rate = g.cost / g.hours;
    const share = Math.min(1, g.hours / (g.resources.size * periodHours));
    const offer = opts.reservations.find((o) => o.instanceType === type) ?? null;
    const base = { instanceType: type, service: g.service, resources: [...g.resources].sort(), hours: round(g.hours, 2), onDemandCost: round(g.cost), onDemandHourly: round(rate, 6), runningShare: round(share, 3) };
    if (!offer) {
      out.push({ ...base, offer: null, monthlySaving: null, breakEvenMonths: null, termSaving: null, worthIt: null, arithmetic: `on demand: ${m(g.cost)} / ${round(g.hours, 2)} h = ${round(rate, 4)}/h per instance, running ${round(share * 100, 1)}% of the period; no reserved offer given` });
      continue;
    }
    const onDemandMonth = rate * HOURS_PER_MONTH * share;
    const reservedMonth = offer.hourly * HOURS_PER_MONTH;
    const saving = onDemandMonth - reservedMonth;
    const months = saving > 0 ? offer.upfront / saving : null;
    const termSaving = saving * offer.termMonths - offer.upfront;
    const worth = months !== null && months <= offer.termMonths && termSaving > 0;
    const shown = `on demand ${m(g.cost)} / ${round(g.hours, 2)} h = ${round(rate, 4)}/h; per month ${round(rate, 4)} x 730 h x ${round(share, 3)} running = ${m(onDemandMonth)}; reserved ${round(offer.hourly, 4)} x 730 h = ${m(reservedMonth)} + ${m(offer.upfront)} upfront; saving ${m(saving)}/month`;
    out.push({
      ...base, offer, monthlySaving: round(saving, 2), breakEvenMonths: months === null ? null : round(months, 2), termSaving: round(termSaving, 2), worthIt: worth,
      arithmetic: months === null
        ? `${shown}: never breaks even (the reserved hourly rate is not below the on-demand cost at this running share)`
        : `${shown}; break-even = ${m(offer.upfront)} / ${m(saving)} = ${round(months, 2)} months of a ${offer.termMonths}-month term; over the term ${m(saving)} x ${offer.termMonths} - ${m(offer.upfront)} = ${m(termSaving)} per instance`,
    });
  }
  return out;
}

export function renderOptimize(o: OptimizeResult): string {
  const m = (n: number) => money(n, o.currency);
  const out = ['# cost-ai optimize', '', `Period ${o.period.start} .. ${o.period.end} (${o.period.days} day(s)); ${o.examined.lines} line(s), ${o.examined.resources} resource(s). Estimated saving ${m(o.estimatedMonthlySaving)}/month.`, ''];
  out.push('## Waste', '');
  if (!o.waste.length) out.push('None found.');
  else {
    // The text shows the first 200 (the costliest); the data holds them all.
    out.push('| kind | resource | service | per month | evidence | lines |', '|---|---|---|---:|---|---|');
    for (const w of o.waste.slice(0, 200)) out.push(`| ${w.kind} | ${w.resource} | ${w.service} | ${m(w.monthlyCost)} | ${w.evidence} | ${w.file}:${w.lines.join(',')} |`);
    if (o.waste.length > 200) out.push(`| ... | ${o.waste.length - 200} more in the data | | | | |`);
  }
  out.push('', '## Rightsizing', '');
  if (!o.rightsizing.length) out.push('No candidate.');
  else for (const r of o.rightsizing.slice(0, 200)) out.push(`- ${r.resource}${r.instanceType ? ` (${r.instanceType})` : ''} -> ${r.suggested ?? 'smaller capacity'}: ${r.arithmetic}`);
  out.push('', '## Reserved capacity', '');
  if (!o.reservations.length) out.push('No instance running on demand in the export.');
  else out.push(...o.reservations.map((r) => `- ${r.instanceType} (${r.resources.length} instance(s))${r.worthIt === null ? '' : r.worthIt ? ': worth reserving' : ': not worth reserving'}: ${r.arithmetic}`));
  if (o.notJudged.length) out.push('', '## Not judged', '', ...o.notJudged.map((n) => `- ${n}`));
  out.push('', `Thresholds: idle usage <= ${o.thresholds.idleUsage}, at least ${m(o.thresholds.minMonthlyCost)}/month, oversized under ${o.thresholds.utilizationBelow}% busy, rightsized to ${o.thresholds.targetUtilization}%.`);
  return out.join('\n');
}
