/** Effective per-agent settings: the agent's section over the `defaults` section. Pure. */
import type { AcmfMode } from '../engine/catalog/enums';
import type { CadreConfig } from './schema';

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
 * Effective settings of one agent. Scalars and lists of the agent section replace the defaults
 * (lists are not concatenated); progression thresholds merge key by key. An agent id without a
 * section gets the defaults.
 */
export function agentSettings(config: CadreConfig, agentId: string): AgentSettings {
  const d = config.defaults;
  const a = (config.agents as Record<string, CadreConfig['agents'][keyof CadreConfig['agents']]>)[agentId];
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
