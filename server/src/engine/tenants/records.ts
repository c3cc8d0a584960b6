/**
 * Tenants as stored. A tenant owns API keys, executions, approvals, projects, webhooks, integrations,
 * feedback, its quotas and its subscription. The default tenant (`DEFAULT_TENANT_ID`) holds everything
 * of a single-user install and is the install's own: its admin keys administer the other tenants.
 */
import type { Subscription } from '../catalog/subscription';

export interface TenantQuotas {
  /** Executions accepted in a rolling 24 hours (null: no limit). */
  executionsPerDay: number | null;
  /** Executions not yet ended at once (null: no limit). */
  concurrentExecutions: number | null;
  /** Projects (null: no limit). */
  projects: number | null;
  /** Outbound webhook subscriptions (null: no limit). */
  webhooks: number | null;
}

export const QUOTA_NAMES = ['executionsPerDay', 'concurrentExecutions', 'projects', 'webhooks'] as const satisfies ReadonlyArray<keyof TenantQuotas>;

export const NO_QUOTAS: TenantQuotas = Object.freeze({ executionsPerDay: null, concurrentExecutions: null, projects: null, webhooks: null });

export interface TenantRecord {
  id: string;
  name: string;
  /** What this tenant has bought; null: the install's subscription (the default tenant always). */
  subscription: Subscription | null;
  quotas: TenantQuotas;
  createdAt: string;
  updatedAt: string;
  /** Set when deleted: its keys are revoked and it accepts no new work; its records stay readable to the install admin. */
  deletedAt?: string;
  /** A probe tenant made by tenant-ai check-isolation (deleted when the check ends). */
  probe?: boolean;
}

/** Counts a tenant's quotas are measured against. */
export interface TenantUsage {
  executionsLast24h: number;
  activeExecutions: number;
  projects: number;
  webhooks: number;
}
