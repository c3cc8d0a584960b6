/** The configuration file: schema, defaults, loading and the per-agent view. See docs/configuration.md. */
export { KNOWN_AGENT_IDS, isKnownAgentId, type KnownAgentId } from './agent-ids';
export {
  agentConfigSchema,
  apmSchema,
  cadreConfigSchema,
  chatSchema,
  cloudMonitoringSchema,
  DEFAULT_APPROVAL_REQUIRED_FOR,
  DEFAULT_CONFIG,
  DEFAULT_PROTECTED_PATHS,
  defaultsSchema,
  incidentManagementSchema,
  INCIDENT_DEDUP_STRATEGIES,
  INCIDENT_SEVERITIES,
  INCIDENT_WEBHOOK_EVENTS,
  INTEGRATION_NAMES,
  integrationsSchema,
  LLM_PROVIDERS,
  llmSchema,
  policySchema,
  trackerSchema,
  TRACKER_WEBHOOK_EVENTS,
  type AgentConfig,
  type CadreConfig,
  type CadreConfigInput,
  type DefaultsConfig,
  type IntegrationName,
  type IntegrationsConfig,
  type LlmConfig,
  type LlmProvider,
  type PolicyRule,
} from './schema';
export { interpolate, isSecretKey } from './interpolate';
export {
  configCandidates,
  formatPath,
  HOME_CONFIG_FILE,
  loadConfig,
  parseConfig,
  resolveCadreHome,
  WORKSPACE_CONFIG_FILE,
  type ConfigEnv,
  type ConfigIssue,
  type LoadConfigOptions,
  type LoadedConfig,
} from './load';
// The per-agent view is the engine's (engine/settings.ts): a CadreConfig is the engine's settings by structure.
export { agentSettings, type AgentSettings, type EngineSettings, type ProgressionThresholds } from '../engine/settings';
