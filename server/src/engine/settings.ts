/**
 * The engine's settings: the part of the configuration the engine reads, owned here so that the engine
 * depends on no door (issue 18). The keys are those of the configuration file (`.cadre.yaml`, snake
 * case) because that is where they come from: server/src/config validates the file into a
 * `CadreConfig`, which is an `EngineSettings` by structure (the call to `createEngine` checks it), and
 * the doors read `engine.config` through this type. A key the engine does not read is not listed.
 * Pure: no I/O.
 */
import type { AcmfMode, IntelligenceTier, Scope } from './catalog/enums';
import type { CommercialTier, ProductId } from './catalog/subscription';
import type { FindingSeverity } from './events/service-events';
import type { PolicyRule } from './rigor/review-subject';

export interface ThresholdSettings {
  success_rate: number;
  min_tasks: number;
  consecutive_success: number;
}

/** An `agents.<agent_id>` section: every key optional (the `defaults` section fills the rest). */
export interface AgentSection {
  acmf_mode?: AcmfMode | undefined;
  capabilities?: readonly string[] | undefined;
  approval_required_for?: readonly string[] | undefined;
  progression?: {
    to_assisted?: Partial<ThresholdSettings> | undefined;
    to_autonomous?: (Partial<ThresholdSettings> & { enabled?: boolean | undefined }) | undefined;
  } | undefined;
}

export interface EngineSettings {
  agents: Partial<Record<string, AgentSection>>;
  defaults: {
    acmf_mode: AcmfMode;
    approval_required_for: readonly string[];
    progression: { to_assisted: ThresholdSettings; to_autonomous: ThresholdSettings & { enabled: boolean } };
    intelligence: IntelligenceTier;
    scope: Scope;
    protected_paths: readonly string[];
    policies: readonly PolicyRule[];
    denied_licenses: readonly string[];
  };
  /** What this install has bought; absent: a local install owns everything. */
  subscription?: { products: readonly ProductId[]; tier: CommercialTier } | undefined;
  /** Separation of duties, read by the doors that decide approvals (docs/decisions.md). */
  security?: { self_approval?: boolean | undefined } | undefined;
  /** The least severity of a finding that raises the contract's `security.vulnerability` webhook event. */
  webhooks?: { severity_threshold: FindingSeverity } | undefined;
  /** observe-ai's settings (see `observeSettings` in engine/index.ts). */
  observe: { urls: readonly string[]; alert_rules: ReadonlyArray<{ name: string }> };
  /** policy-ai's section (rules, waivers, disabled baseline rules), handed to its skill as is: the config module validates it. */
  policy: Readonly<Record<string, unknown>>;
  integrations: {
    cloud_monitoring: { enabled: boolean; region?: string | undefined; metrics: { namespaces: readonly string[]; period: number }; logs: { groups: readonly string[] } };
    apm: { enabled: boolean; site?: string | undefined; apm: { service_name?: string | undefined }; metrics: { prefix?: string | undefined } };
    tracker: { projects: { mapping: Readonly<Record<string, string>> } };
  };
}

export interface ProgressionThresholds {
  /** Share of successful tasks, 0..1. */
  successRate: number;
  minTasks: number;
  consecutiveSuccess: number;
}

export interface AgentSettings {
  agentId: string;
  /** The configured mode: the starting mode, and applied once more whenever the configured value changes (see docs/decisions.md). */
  acmfMode: AcmfMode;
  /** The agent's `capabilities` list, or null when the section does not set one (catalog default). */
  capabilities: string[] | null;
  approvalRequiredFor: string[];
  progression: {
    toAssisted: ProgressionThresholds;
    /** Cadre extension; when `enabled`, reaching the thresholds only proposes AUTONOMOUS to a person. */
    toAutonomous: ProgressionThresholds & { enabled: boolean };
  };
}

/**
 * Effective settings of one agent: its section over the `defaults` section. Scalars and lists of the
 * agent section replace the defaults (lists are not concatenated); progression thresholds merge key by
 * key. An agent id without a section gets the defaults.
 */
export function agentSettings(settings: EngineSettings, agentId: string): AgentSettings {
  const d = settings.defaults;
  const a = settings.agents[agentId];
  const ta = a?.progression?.to_assisted;
  const tx = a?.progression?.to_autonomous;
  return {
    agentId,
    acmfMode: a?.acmf_mode ?? d.acmf_mode,
    capabilities: a?.capabilities ? [...a.capabilities] : null,
    approvalRequiredFor: [...(a?.approval_required_for ?? d.approval_required_for)],
    progression: {
      toAssisted: {
        successRate: ta?.success_rate ?? d.progression.to_assisted.success_rate,
        minTasks: ta?.min_tasks ?? d.progression.to_assisted.min_tasks,
        consecutiveSuccess: ta?.consecutive_success ?? d.progression.to_assisted.consecutive_success,
      },
      toAutonomous: {
        enabled: tx?.enabled ?? d.progression.to_autonomous.enabled,
        successRate: tx?.success_rate ?? d.progression.to_autonomous.success_rate,
        minTasks: tx?.min_tasks ?? d.progression.to_autonomous.min_tasks,
        consecutiveSuccess: tx?.consecutive_success ?? d.progression.to_autonomous.consecutive_success,
      },
    },
  };
}
