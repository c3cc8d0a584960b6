/**
 * tenant-ai `quotas` [ULTRA]: usage against quotas per tenant, from the facts the engine hands in
 * (engine/governance/step-facts.ts: the tenant service's own report, so this and `GET /v1/tenant`
 * cannot disagree). A key of the default tenant (the install) sees every tenant; any other key its own.
 */
import { z } from 'zod';
import type { Skill } from '../../engine/rigor/skill';
import { factsOf, factsPhases, round } from '../governance/facts';

const KIND = 'tenant-quotas';
const LABEL = 'tenant-ai quotas';

export interface QuotaRow { name: string; limit: number | null; used: number; exceeded: boolean }
export interface QuotaFacts {
  action: 'quotas';
  asOf: string;
  /** The install's view (every tenant) or one tenant's. */
  scope: 'install' | 'tenant';
  tenants: Array<{ id: string; name: string; deleted: boolean; quotas: QuotaRow[] }>;
}

export const quotasInputSchema = z.looseObject({
  governance: z.unknown().optional().describe("Handed in by the engine: every tenant's quotas and usage for the install, else the caller's tenant's (a request's own value is replaced)"),
});

const row = z.object({ name: z.string(), limit: z.number().int().nullable(), used: z.number().int().min(0), exceeded: z.boolean(), share: z.number().nullable() });
export const quotasDataSchema = z.object({
  asOf: z.string(), scope: z.enum(['install', 'tenant']),
  tenants: z.array(z.object({ id: z.string(), name: z.string(), deleted: z.boolean(), quotas: z.array(row), atLimit: z.array(z.string()) })),
  atLimit: z.number().int().min(0),
}).nullable();

export type QuotasData = NonNullable<z.output<typeof quotasDataSchema>>;

export function quotasReport(f: QuotaFacts): QuotasData {
  const tenants = f.tenants.map((t) => {
    const quotas = t.quotas.map((q) => ({ ...q, share: q.limit ? round(q.used / q.limit, 3) : null }));
    return { id: t.id, name: t.name, deleted: t.deleted, quotas, atLimit: quotas.filter((q) => q.exceeded).map((q) => q.name) };
  });
  return { asOf: f.asOf, scope: f.scope, tenants, atLimit: tenants.filter((t) => t.atLimit.length > 0).length };
}

function render(d: QuotasData): string {
  const lines = ['# tenant-ai quotas', '', `As of ${d.asOf} (${d.scope === 'install' ? 'every tenant of the install' : "the caller's tenant"}).`, ''];
  for (const t of d.tenants) {
    lines.push(`## ${t.name} (${t.id})${t.deleted ? ' (deleted)' : ''}`, '', '| quota | limit | used | share |', '|---|---:|---:|---:|');
    for (const q of t.quotas) lines.push(`| ${q.name} | ${q.limit ?? 'no limit'} | ${q.used} | ${q.share === null ? '-' : `${round(q.share * 100, 1)}%`}${q.exceeded ? ' (at limit)' : ''} |`);
    lines.push('');
  }
  return lines.join('\n');
}

export const quotasSkill: Skill = {
  agentId: 'tenant-ai',
  action: 'quotas',
  inputSchema: quotasInputSchema,
  outputSchema: quotasDataSchema,
  ...factsPhases<QuotaFacts>({
    kind: KIND, label: LABEL, facts: factsOf('quotas'),
    evidence: (f) => [{ source: 'engine: tenants', detail: `${f.tenants.length} tenant(s) with their quotas and usage`, weight: 0.9 }],
    report(ctx, f) {
      const d = quotasReport(f);
      // Counted by the engine from the store, nothing estimated: high, lower when there is nothing to compare.
      const limited = d.tenants.flatMap((t) => t.quotas).filter((q) => q.limit !== null).length;
      const confidence = limited > 0 ? 0.95 : 0.8;
      ctx.progress(100, confidence);
      const summary = `${d.tenants.length} tenant(s), ${d.atLimit} at a quota limit${d.atLimit ? `: ${d.tenants.filter((t) => t.atLimit.length).map((t) => `${t.name} (${t.atLimit.join(', ')})`).join('; ')}` : ''}`;
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: render(d), tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'analyze', description: "compare each tenant's usage with its quotas" }];
  },
};

