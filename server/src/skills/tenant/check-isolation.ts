/**
 * tenant-ai `check-isolation` [ULTRA]: the tenant boundary proven through the real API. The host
 * (server/src/http/isolation/check.ts) makes two probe tenants, has the owner make one object of each
 * kind, sends every route of the probe table with the intruder's key and hands the answers in as
 * `input.governance`; this skill judges nothing it did not see and renders the table: each route,
 * what it must answer, what it answered, and the verdict.
 */
import { z } from 'zod';
import type { Skill, SkillContext } from '../../engine/rigor/skill';
import { factsPhases, governanceFacts, isFactError, type FactErrorShape } from '../governance/facts';

const KIND = 'tenant-isolation';
const LABEL = 'tenant-ai check-isolation';

const rowSchema = z.object({
  route: z.string(), expect: z.string(), method: z.string(), path: z.string(), status: z.number().int(),
  ownerStatus: z.number().int().nullable(), verdict: z.enum(['isolated', 'leak', 'inconclusive']), why: z.string(),
});
const factsSchema = z.object({
  action: z.literal('check-isolation'), asOf: z.string(), ownerTenant: z.string(), intruderTenant: z.string(),
  rows: z.array(rowSchema), unprobed: z.array(z.string()),
  intact: z.array(z.object({ object: z.string(), ok: z.boolean(), detail: z.string() })), cleanup: z.array(z.string()),
});
type IsolationFacts = z.output<typeof factsSchema>;

export const checkIsolationInputSchema = z.looseObject({
  governance: z.unknown().optional().describe("Handed in by the engine: the answers of every route to a probe tenant's key against another probe tenant's objects (a request's own value is replaced)"),
});

export const checkIsolationDataSchema = z.object({
  asOf: z.string(), ownerTenant: z.string(), intruderTenant: z.string(),
  routes: z.number().int().min(0), isolated: z.number().int().min(0), leaks: z.number().int().min(0), inconclusive: z.number().int().min(0),
  rows: z.array(rowSchema), unprobed: z.array(z.string()),
  intact: z.array(z.object({ object: z.string(), ok: z.boolean(), detail: z.string() })), cleanup: z.array(z.string()),
  verdict: z.enum(['isolated', 'breached', 'incomplete']).describe('breached: a leak or a changed object; incomplete: an inconclusive route or a route without a probe'),
}).nullable();

export type CheckIsolationData = NonNullable<z.output<typeof checkIsolationDataSchema>>;

export function isolationReport(f: IsolationFacts): CheckIsolationData {
  const count = (v: string) => f.rows.filter((r) => r.verdict === v).length;
  const leaks = count('leak');
  const changed = f.intact.filter((i) => !i.ok).length;
  const inconclusive = count('inconclusive');
  const verdict = leaks > 0 || changed > 0 ? 'breached' : inconclusive > 0 || f.unprobed.length > 0 ? 'incomplete' : 'isolated';
  return {
    asOf: f.asOf, ownerTenant: f.ownerTenant, intruderTenant: f.intruderTenant, routes: f.rows.length, isolated: count('isolated'), leaks, inconclusive,
    rows: f.rows, unprobed: f.unprobed, intact: f.intact, cleanup: f.cleanup, verdict,
  };
}

function render(d: CheckIsolationData): string {
  const lines = [
    '# tenant-ai check-isolation', '',
    `As of ${d.asOf}: a key of probe tenant ${d.intruderTenant} against the objects of probe tenant ${d.ownerTenant}, through the real API.`, '',
    `**${d.verdict}**: ${d.routes} route(s), ${d.isolated} isolated, ${d.leaks} leak(s), ${d.inconclusive} inconclusive.`, '',
    '| route | must answer | answered | owner | verdict |', '|---|---|---:|---:|---|',
    ...d.rows.map((r) => `| ${r.route} | ${r.expect} | ${r.status} | ${r.ownerStatus ?? '-'} | ${r.verdict === 'isolated' ? 'isolated' : `**${r.verdict}**: ${r.why}`} |`),
    '', "## The owner's objects after the intruder's writes", '',
    ...d.intact.map((i) => `- ${i.object}: ${i.ok ? 'unchanged' : `**${i.detail}**`}`),
  ];
  if (d.unprobed.length > 0) lines.push('', '## Routes without a probe (decide their tenant rule)', '', ...d.unprobed.map((u) => `- ${u}`));
  lines.push('', '## Clean-up', '', ...d.cleanup.map((c) => `- ${c}`));
  return lines.join('\n');
}

function facts(ctx: SkillContext): IsolationFacts | { missing: string } | FactErrorShape {
  const f = governanceFacts<IsolationFacts>(ctx, 'check-isolation');
  if ('missing' in f || isFactError(f)) return f;
  const parsed = factsSchema.safeParse(f);
  return parsed.success ? parsed.data : { error: { code: 'invalid', message: `the isolation facts are malformed: ${parsed.error.issues[0]?.message ?? 'invalid'}` } };
}

export const checkIsolationSkill: Skill = {
  agentId: 'tenant-ai',
  action: 'check-isolation',
  inputSchema: checkIsolationInputSchema,
  outputSchema: checkIsolationDataSchema,
  ...factsPhases<IsolationFacts>({
    kind: KIND, label: LABEL, facts: facts,
    evidence: (f) => [{ source: 'the real API over loopback', detail: `${f.rows.length} route(s) probed between two probe tenants`, weight: 0.95 }],
    report(ctx, f) {
      const d = isolationReport(f);
      // Every answer was seen, nothing estimated; lower when some routes proved nothing.
      const confidence = d.verdict === 'incomplete' ? 0.7 : 0.95;
      ctx.progress(100, confidence);
      const bad = d.rows.filter((r) => r.verdict === 'leak').map((r) => r.route);
      const changed = d.intact.filter((i) => !i.ok).map((i) => `${i.object} ${i.detail}`);
      const summary = d.verdict === 'isolated'
        ? `tenant boundary holds: ${d.routes} route(s) probed through the API, every one isolated`
        : d.verdict === 'breached'
          ? `tenant boundary BREACHED: ${[...bad, ...changed].slice(0, 5).join('; ')}${bad.length + changed.length > 5 ? ' …' : ''}`
          : `tenant boundary holds on ${d.isolated} of ${d.routes} route(s); ${d.inconclusive} inconclusive, ${d.unprobed.length} without a probe`;
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: render(d), tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'analyze', description: "judge each route's answer to another tenant's key" }];
  },
};
