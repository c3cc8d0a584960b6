/**
 * Adaptations: the changes adapt-ai proposed that ACMF let through (allowed by adapt-ai's mode or
 * approved by a person), in force from then on. Two kinds (catalog/action-kinds.ts ADAPTATION_KINDS):
 *
 *  - `tune_agent`: a stricter threshold of one gate for one agent (held by the pipeline's thresholds:
 *    an adaptation can only tighten a gate, never loosen it), or a lower ACMF mode (applied through
 *    the ACMF service, audited as a mode change). Agents are the install's: only the default tenant's
 *    evaluation may tune them.
 *  - `suppress_finding`: a finding fingerprint people rated a false positive, left out of later scans
 *    of the same tenant (handed to the scanning skill as `input.suppressedFindings`).
 *
 * Applied once per (execution, proposal): an execution event seen twice, or after a restart, changes nothing.
 */
import type { AcmfService } from '../acmf/acmf-service';
import { ACMF_MODES, type AcmfMode } from '../catalog/enums';
import type { Clock, CollectionStore, Repository } from '../ports';
import { DEFAULT_TENANT_ID } from '../tenants/tenant-id';

export const ADAPTATIONS_COLLECTION = 'adaptations';
const NONE: number[] = [];

export type AdaptationEffect = { gate: string; threshold: number } | { mode: string } | { fingerprint: string };

export interface AdaptationRecord {
  /** `<executionId>:<proposal id>`: one application per evaluation and proposal. */
  id: string;
  proposalId: string;
  kind: 'tune_agent' | 'suppress_finding';
  agentId: string | null;
  effect: AdaptationEffect;
  change: string;
  executionId: string;
  tenantId: string;
  /** `allowed by ACMF mode <mode>` or the approver. */
  by: string;
  appliedAt: string;
}

/** What an evaluation's step reports it may apply (adapt-ai evaluate `data.applying`). */
export interface ApplyingEntry {
  id: string;
  kind: 'tune_agent' | 'suppress_finding';
  agentId: string | null;
  change: string;
  effect: AdaptationEffect | null;
  status: 'allowed' | 'denied' | 'not_proposed';
  by: string | null;
}

/** A gate's threshold with adaptations: the strictest of the scope's and the adapted ones (never looser). */
export function tightened(comparison: 'min' | 'max' | null | undefined, base: number | null, adapted: readonly number[]): number | null {
  if (base === null || adapted.length === 0 || !comparison) return base;
  return comparison === 'max' ? Math.min(base, ...adapted) : Math.max(base, ...adapted);
}

export class Adaptations {
  private readonly repo: Repository<AdaptationRecord>;
  /** `<agent>\0<gate>` → adapted thresholds; null until first asked and after each application. */
  private thresholds: Map<string, number[]> | null = null;

  constructor(private readonly deps: { store: CollectionStore; clock: Clock; acmf: AcmfService; log(line: string): void }) {
    this.repo = deps.store.collection<AdaptationRecord>(ADAPTATIONS_COLLECTION);
  }

  /** In force for a tenant: its own suppressions and the install's agent tunings. */
  list(tenantId: string): AdaptationRecord[] {
    return this.repo.list((r) => r.tenantId === tenantId || r.kind === 'tune_agent').sort((a, b) => a.appliedAt.localeCompare(b.appliedAt));
  }

  /**
   * The thresholds of `gate` adapted for `agentId` (the pipeline holds the agent to the strictest).
   * Asked for each of the 21 gates of every step: answered from an index, rebuilt when an adaptation is applied.
   */
  thresholdFor(agentId: string, gate: string): number[] {
    if (!this.thresholds) {
      this.thresholds = new Map();
      for (const r of this.repo.list((x) => x.kind === 'tune_agent' && 'gate' in x.effect)) {
        const key = `${r.agentId ?? ''}\0${(r.effect as { gate: string }).gate}`;
        this.thresholds.set(key, [...(this.thresholds.get(key) ?? []), (r.effect as { threshold: number }).threshold]);
      }
    }
    return this.thresholds.get(`${agentId}\0${gate}`) ?? NONE;
  }

  /** Fingerprints a tenant's people rated false positives, applied through ACMF. */
  suppressedFor(tenantId: string, agentId: string): string[] {
    return this.repo.list((r) => r.kind === 'suppress_finding' && r.tenantId === tenantId && (r.agentId === null || r.agentId === agentId))
      .map((r) => (r.effect as { fingerprint: string }).fingerprint);
  }

  /**
   * Applies what an adapt-ai evaluation was allowed to apply. Refuses (logs, skips) a tuning asked by
   * another tenant than the install's; returns what it applied now.
   */
  async applyFrom(executionId: string, tenantId: string, entries: readonly ApplyingEntry[]): Promise<AdaptationRecord[]> {
    const applied: AdaptationRecord[] = [];
    for (const e of entries) {
      if (e.status !== 'allowed' || !e.effect) continue;
      const id = `${executionId}:${e.id}`;
      if (this.repo.get(id)) continue;
      if (e.kind === 'tune_agent' && tenantId !== DEFAULT_TENANT_ID) {
        this.deps.log(`adaptation ${e.id} of ${executionId} not applied: only the install tunes its agents (tenant ${tenantId})`);
        continue;
      }
      if (e.kind === 'tune_agent' && 'mode' in e.effect) {
        if (!e.agentId || !(ACMF_MODES as readonly string[]).includes(e.effect.mode)) continue;
        await this.deps.acmf.setMode(e.agentId, e.effect.mode as AcmfMode, `adapt-ai (${executionId}, ${this.decidedBy(executionId, e.kind)})`, e.change);
      }
      const rec: AdaptationRecord = {
        id, proposalId: e.id, kind: e.kind, agentId: e.agentId, effect: e.effect, change: e.change, executionId, tenantId,
        by: this.decidedBy(executionId, e.kind), appliedAt: new Date(this.deps.clock.now()).toISOString(),
      };
      await this.repo.put(rec);
      this.thresholds = null;
      applied.push(rec);
    }
    return applied;
  }

  /** Who let the change through: the person who approved adapt-ai's action of that kind, else its mode. */
  private decidedBy(executionId: string, kind: string): string {
    const a = this.deps.acmf.listApprovals({ executionId, agentId: 'adapt-ai', status: 'approved' }).find((x) => x.action.kind === kind);
    return a ? `approved by ${a.decidedBy ?? 'a person'}` : "allowed by adapt-ai's ACMF mode";
  }
}
