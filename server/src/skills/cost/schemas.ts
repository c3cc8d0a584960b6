/**
 * The shapes of cost-ai's artifact data (docs/api.md, "cost-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const money = z.number().finite();
const share = z.object({ key: z.string(), cost: money, share: z.number() });
const period = z.object({ start: z.string(), end: z.string(), days: z.number().int().min(0) });
const source = z.object({
  files: z.array(z.object({ file: z.string(), format: z.enum(['aws-cur', 'aws-cur2', 'gcp-billing', 'generic']), records: z.number().int().min(0), tagKeys: z.array(z.string()) })),
  ignored: z.array(z.string()), origin: z.enum(['input.export', 'conventional places']),
});

export const reportDataSchema = z.object({
  currency: z.string().nullable(), period, total: money, credits: money, net: money,
  byService: z.array(share), byTag: z.record(z.string(), z.array(share)),
  byResource: z.array(z.object({ resource: z.string(), service: z.string(), cost: money, file: z.string(), lines: z.array(z.number().int().min(1)) })),
  otherResources: z.object({ count: z.number().int().min(0), cost: money }), unattributed: money, byChargeType: z.array(share),
  byPeriod: z.object({ granularity: z.enum(['day', 'month']), totals: z.array(z.object({ period: z.string(), cost: money })) }),
  examined: z.object({ files: z.number().int().min(0), lines: z.number().int().min(0), services: z.number().int().min(0), resources: z.number().int().min(0) }),
  source,
}).nullable();

export const optimizeDataSchema = z.object({
  currency: z.string().nullable(), period,
  waste: z.array(z.object({
    kind: z.enum(['idle', 'unattached-ip', 'unattached-volume', 'oversized']), resource: z.string().min(1), service: z.string(),
    cost: money, monthlyCost: money, evidence: z.string().min(1), file: z.string().min(1), lines: z.array(z.number().int().min(1)).min(1),
    severity: z.enum(['high', 'medium', 'low']),
  })),
  rightsizing: z.array(z.object({
    resource: z.string(), instanceType: z.string().nullable(), utilization: z.number(), suggested: z.string().nullable(),
    monthlyCost: money, estimatedMonthlySaving: money, arithmetic: z.string().min(1),
  })),
  reservations: z.array(z.object({
    instanceType: z.string(), service: z.string(), resources: z.array(z.string()), hours: z.number(), onDemandCost: money, onDemandHourly: z.number(),
    runningShare: z.number().min(0).max(1),
    offer: z.object({ instanceType: z.string(), upfront: z.number(), hourly: z.number(), termMonths: z.number() }).nullable(),
    monthlySaving: z.number().nullable(), breakEvenMonths: z.number().nullable(), termSaving: z.number().nullable(), worthIt: z.boolean().nullable(),
    arithmetic: z.string().min(1),
  })),
  notJudged: z.array(z.string()),
  thresholds: z.object({ idleUsage: z.number(), minMonthlyCost: z.number(), utilizationBelow: z.number(), targetUtilization: z.number() }),
  examined: z.object({ lines: z.number().int(), resources: z.number().int(), withUtilization: z.number().int(), volumes: z.number().int(), offers: z.number().int() }),
  estimatedMonthlySaving: money,
  source,
}).nullable();
