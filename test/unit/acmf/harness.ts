/** Builds an AcmfService over in-memory fakes; `restart()` builds a new service over the same repos. */
import { AcmfService, type AcmfSettings } from '../../../server/src/engine/acmf/acmf-service';
import type { AgentAcmfState, ApprovalRecord } from '../../../server/src/engine/acmf/records';
import { MessageBus } from '../../../server/src/engine/bus';
import { idGenerator, ManualClock, MemoryAuditTrail, MemoryRepository } from '../../support/fakes';

export const DEFAULT_SETTINGS: AcmfSettings = {
  acmfMode: 'LEARNING',
  approvalRequiredFor: ['production_changes', 'security_sensitive'],
  protectedPaths: ['.github/workflows/**'],
  toAssisted: { successRate: 0.8, minTasks: 5, consecutiveSuccess: 3 },
  toAutonomous: null,
};

export interface Harness {
  service: AcmfService;
  agents: MemoryRepository<AgentAcmfState>;
  approvals: MemoryRepository<ApprovalRecord>;
  audit: MemoryAuditTrail;
  bus: MessageBus;
  busErrors: unknown[];
  clock: ManualClock;
  /** Per-agent settings; tests may mutate. */
  settings: Map<string, AcmfSettings>;
  restart(): AcmfService;
}

export function createHarness(overrides: Partial<AcmfSettings> = {}): Harness {
  const clock = new ManualClock();
  const agents = new MemoryRepository<AgentAcmfState>();
  const approvals = new MemoryRepository<ApprovalRecord>();
  const audit = new MemoryAuditTrail(clock);
  const busErrors: unknown[] = [];
  const bus = new MessageBus((err) => busErrors.push(err));
  const settings = new Map<string, AcmfSettings>();
  const settingsOf = (agentId: string): AcmfSettings => settings.get(agentId) ?? { ...DEFAULT_SETTINGS, ...overrides };
  const newId = idGenerator();
  const build = (): AcmfService => new AcmfService({ agents, approvals, audit, bus, clock, settings: settingsOf, newId });
  return { service: build(), agents, approvals, audit, bus, busErrors, clock, settings, restart: build };
}
