/**
 * An engine for the governance tests: in-memory store, a real JSON Lines audit trail in a temp
 * directory, the embedded govern/adapt/success skills (in this thread), the fleet test skills for
 * the other agents, and the host's key authority given as a table of key roles.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail, type JsonlAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { parseConfig } from '../../../server/src/config/load';
import { createEngine, type Engine } from '../../../server/src/engine/index';
import type { Principal } from '../../../server/src/engine/executions/execution-service';
import type { Skill } from '../../../server/src/engine/rigor/skill';
import { adaptSkills } from '../../../server/src/skills/adapt/index';
import { governFactsSkills } from '../../../server/src/skills/govern/facts-index';
import { reviewChecks } from '../../../server/src/skills/review-checks';
import { successSkills } from '../../../server/src/skills/success/index';
import { fleetSkills, MemoryStore, settled } from '../../support/engine-harness';

export interface GovEngine {
  engine: Engine;
  audit: JsonlAuditTrail;
  store: MemoryStore;
  dir: string;
  roles: Map<string, string>;
  /** Runs a direct action as `who` and waits for its end. */
  run(agentId: string, action: string, input: Record<string, unknown>, who: Principal): Promise<ReturnType<Engine['executions']['get']>>;
  close(): Promise<void>;
}

export const ours: Skill[] = [...governFactsSkills, ...adaptSkills, ...successSkills];

export async function govEngine(opts: { yaml?: string; roles?: Record<string, string>; dir?: string; store?: MemoryStore; keep?: boolean } = {}): Promise<GovEngine> {
  const dir = opts.dir ?? mkdtempSync(path.join(tmpdir(), 'cadre-gov-'));
  const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), durable: false });
  const config = parseConfig(opts.yaml ?? 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n', path.join(dir, '.cadre.yaml'), {});
  const roles = new Map(Object.entries(opts.roles ?? {}));
  const store = opts.store ?? new MemoryStore();
  const mine = new Set(ours.map((s) => `${s.agentId}/${s.action}`));
  const engine = createEngine({
    store, audit, config, checks: reviewChecks, log: () => {}, retry: { baseDelayMs: 1, maxDelayMs: 5 },
    skills: [...fleetSkills.filter((s) => !mine.has(`${s.agentId}/${s.action}`)), ...ours],
    keys: { roleOf: (id) => roles.get(id) ?? null, activeKeys: () => roles.size },
  });
  return {
    engine, audit, store, dir, roles,
    run: async (agentId, action, input, who) => settled(engine, (await engine.executions.runAction(agentId, action, { prompt: `${agentId} ${action}`, input }, who)).id),
    close: async () => {
      await engine.executions.close();
      await audit.close();
      if (!opts.dir && !opts.keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const as = (keyId: string | null, tenantId?: string): Principal => ({ keyId, callbackSecret: null, ...(tenantId ? { tenantId } : {}) });

/** A second tenant (created through the engine's tenants when it has them). */
export async function newTenant(engine: Engine, name: string): Promise<string> {
  const tenants = (engine as unknown as { tenants?: { create(i: { name: string }): Promise<{ id: string }> } }).tenants;
  return tenants ? (await tenants.create({ name })).id : `tnt_${name}`;
}
