/**
 * The 25 agents (contract: "Capability domains and agents", "Availability", "Source-hosting app
 * integration", "Direct agent actions named"), in the order of the contract's domain table.
 *
 * - `named: true` actions are exactly the contract's table; `named: false` are Cadre's additions so
 *   that every agent can be reached through `/api/agents/{id}/{action}` (docs/decisions.md).
 * - Availability: always_on for the four agents the contract names (observability, incidents,
 *   threat hunting, security scanning), commercial for PRO/ULTRA agents, business_hours for the rest.
 * - Capacity: 8 for the always-on agents (they absorb event bursts at any hour), 2 for agents whose
 *   steps are heavy on the machine or must not race (tester-ai, deploy-ai, backup-ai), else the default.
 */
import { AgentsFileSchema, parseCatalogFile, CATALOG_FILES, type AgentDef, type AgentInput } from './schema';

const RAW_AGENTS = [
  // ------------------------------------------------------------------ BUILD
  {
    id: 'req-ai',
    displayName: 'Requirements',
    description: 'Requirements analysis, specifications, user stories.',
    domains: [{ domain: 'BUILD', role: 'requirements analysis, specifications, user stories', defaultAction: 'analyze' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: false,
    actions: [
      { name: 'analyze', tierTag: null, named: true, description: 'Split a requirement text into user stories with Given-When-Then acceptance criteria.' },
      { name: 'validate', tierTag: null, named: true, description: 'Score user stories against INVEST and flag ambiguous, actor-less or untestable wording.' },
    ],
  },
  {
    id: 'planner-ai',
    displayName: 'Planner',
    description: 'Planning, task breakdown, estimation, dependencies.',
    domains: [{ domain: 'BUILD', role: 'planning, task breakdown, estimation, dependencies', defaultAction: 'plan' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: false,
    actions: [
      { name: 'plan', tierTag: null, named: true, description: 'Break a goal into tasks as a dependency graph: topological order, critical path, parallel groups.' },
      { name: 'estimate', tierTag: null, named: true, description: 'Size the tasks of a breakdown with a stated method (three-point).' },
    ],
  },
  {
    id: 'architect-ai',
    displayName: 'Architect',
    description: 'System design, technology selection, design patterns.',
    domains: [{ domain: 'BUILD', role: 'system design, technology selection, design patterns', defaultAction: 'design' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: true,
    actions: [
      { name: 'design', tierTag: null, named: true, description: "Detect the workspace's stack and propose a component layout." },
      { name: 'validate', tierTag: null, named: true, description: 'Check the module import graph for cycles, layering violations and god modules.' },
    ],
  },
  {
    id: 'coder-ai',
    displayName: 'Coder',
    description: 'Code generation, refactoring, multi-language.',
    domains: [{ domain: 'BUILD', role: 'code generation, refactoring, multi-language', defaultAction: 'generate' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: true,
    actions: [
      { name: 'generate', tierTag: null, named: false, description: 'Generate code for the task goal, as a diff on a branch.' },
      { name: 'fix', tierTag: null, named: false, description: 'Apply the text edits that findings carry, as a diff on a branch.' },
      { name: 'refactor', tierTag: null, named: false, description: 'Deterministic refactors (rename, extract a hard-coded secret into an environment read).' },
    ],
  },
  {
    id: 'review-ai',
    displayName: 'Reviewer',
    description: 'Code review and PR gates in BUILD; validation of fixes before deployment in OPERATE.',
    domains: [
      { domain: 'BUILD', role: 'code review, PR gates, standards, security-pattern checks', defaultAction: 'review' },
      { domain: 'OPERATE', role: 'validates fixes before deployment', defaultAction: 'verify' },
    ],
    tierTag: null,
    availability: 'business_hours',
    prCapable: true,
    actions: [
      { name: 'review', tierTag: null, named: false, description: 'Review a git diff or given files: complexity, dead code, debug leftovers, unsafe patterns, missing tests.' },
      { name: 'verify', tierTag: null, named: false, description: 'Validate a fix before deployment: review, CI result and coverage of the change.' },
    ],
  },
  {
    id: 'tester-ai',
    displayName: 'Tester',
    description: 'Test generation, coverage analysis, suite optimization.',
    domains: [{ domain: 'BUILD', role: 'test generation, coverage analysis, suite optimization', defaultAction: 'test' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: true,
    capacity: 2,
    actions: [
      { name: 'test', tierTag: null, named: false, description: "Run the project's own test command and report the parsed results." },
      { name: 'coverage', tierTag: null, named: false, description: 'Measure coverage and list untested files and functions.' },
      { name: 'generate-tests', tierTag: null, named: false, description: 'Generate test skeletons for exported functions.' },
    ],
  },
  {
    id: 'debug-ai',
    displayName: 'Debugger',
    description: 'Development debugging in BUILD; production root-cause analysis in OPERATE.',
    domains: [
      { domain: 'BUILD', role: 'development debugging, error tracing, fix suggestions', defaultAction: 'explain' },
      { domain: 'OPERATE', role: 'production root-cause analysis, distributed tracing', defaultAction: 'root-cause' },
    ],
    tierTag: null,
    availability: 'business_hours',
    prCapable: true,
    actions: [
      { name: 'explain', tierTag: null, named: false, description: 'Parse a stack trace or error log, map frames to workspace files, classify the cause, propose a fix.' },
      { name: 'root-cause', tierTag: null, named: false, description: 'Correlate an error with the logs and traces given as input to find the production root cause.' },
    ],
  },
  // ------------------------------------------------------------------ OPERATE
  {
    id: 'deploy-ai',
    displayName: 'Deploy',
    description: 'Deployment automation, canary, blue-green, rollback.',
    domains: [{ domain: 'OPERATE', role: 'deployment automation, canary, blue-green, rollback', defaultAction: 'deploy' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: false,
    capacity: 2,
    actions: [
      { name: 'readiness', tierTag: null, named: false, description: 'Deployment readiness: clean tree, branch pushed, tests and coverage, no open critical findings, review and approvals.' },
      { name: 'plan', tierTag: null, named: false, description: 'A canary or blue-green deployment plan with steps, health checks and rollback conditions.' },
      { name: 'deploy', tierTag: null, named: false, description: 'Run the configured deploy command when the ACMF mode allows it.' },
    ],
  },
  {
    id: 'maintain-ai',
    displayName: 'Maintain',
    description: 'Routine maintenance, self-healing, dependency updates, health.',
    domains: [{ domain: 'OPERATE', role: 'routine maintenance, self-healing, dependency updates, health', defaultAction: 'fix' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: true,
    actions: [
      { name: 'health', tierTag: null, named: false, description: 'Routine maintenance checks: lock-file drift, engines mismatch.' },
      { name: 'dependencies', tierTag: null, named: false, description: 'Outdated and deprecated dependencies with an update plan in safe batches.' },
      { name: 'fix', tierTag: null, named: false, description: 'Apply one batch of the update plan or a maintenance repair, as a diff on a branch.' },
    ],
  },
  {
    id: 'observe-ai',
    displayName: 'Observe',
    description: 'Monitoring, metrics, alerting, anomaly detection, cloud-monitoring integration.',
    domains: [{ domain: 'OPERATE', role: 'monitoring, metrics, alerting, anomaly detection, cloud-monitoring integration', defaultAction: 'analyze' }],
    tierTag: null,
    availability: 'always_on',
    prCapable: false,
    capacity: 8,
    actions: [
      { name: 'analyze', tierTag: null, named: false, description: 'Ingest metrics and logs and detect anomalies (rolling z-score, EWMA, change points).' },
      { name: 'alerts', tierTag: null, named: false, description: 'Evaluate alert rules against the given metrics.' },
    ],
  },
  {
    id: 'incident-ai',
    displayName: 'Incident',
    description: 'Triage, severity classification, escalation, postmortems.',
    domains: [{ domain: 'OPERATE', role: 'triage, severity classification, escalation, postmortems', defaultAction: 'triage' }],
    tierTag: null,
    availability: 'always_on',
    prCapable: false,
    capacity: 8,
    actions: [
      { name: 'triage', tierTag: null, named: false, description: 'Classify severity from signals, set the escalation path and the timeline.' },
      { name: 'postmortem', tierTag: null, named: false, description: 'Write the postmortem document of a resolved incident.' },
    ],
  },
  {
    id: 'capacity-ai',
    displayName: 'Capacity',
    description: 'Forecasting, auto-scaling recommendations, load planning.',
    domains: [{ domain: 'OPERATE', role: 'forecasting, auto-scaling recommendations, load planning', defaultAction: 'forecast' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: false,
    actions: [
      { name: 'forecast', tierTag: null, named: false, description: 'Forecast a metric series with a stated error and the time to saturation.' },
      { name: 'recommend', tierTag: null, named: false, description: 'A scaling recommendation from the forecast.' },
    ],
  },
  {
    id: 'backup-ai',
    displayName: 'Backup',
    description: 'Backups, disaster recovery, snapshots, restore verification.',
    domains: [{ domain: 'OPERATE', role: 'backups, disaster recovery, snapshots, restore verification', defaultAction: 'snapshot' }],
    tierTag: null,
    availability: 'business_hours',
    prCapable: false,
    capacity: 2,
    actions: [
      { name: 'snapshot', tierTag: null, named: false, description: 'Snapshot files or the Cadre store to an archive with a manifest of hashes.' },
      { name: 'verify', tierTag: null, named: false, description: 'Restore a snapshot into a scratch folder and verify every hash.' },
    ],
  },
  // ------------------------------------------------------------------ SECURE
  {
    id: 'security-ai',
    displayName: 'Security',
    description: 'Container, dependency, code and secrets scanning, infrastructure-as-code validation, compliance checks.',
    domains: [{ domain: 'SECURE', role: 'container, dependency, code and secrets scanning, infrastructure-as-code validation, compliance checks', defaultAction: 'scan' }],
    tierTag: null,
    availability: 'always_on',
    prCapable: true,
    capacity: 8,
    actions: [
      { name: 'scan', tierTag: null, named: false, description: 'Run every scanner the intelligence tier allows; findings also in SARIF 2.1.0.' },
      { name: 'secrets', tierTag: null, named: false, description: 'Secrets scanning only (fast, e.g. before a commit).' },
    ],
  },
  {
    id: 'threathunter-ai',
    displayName: 'Threat Hunter',
    description: 'Threat hunting, indicator-of-compromise matching, attack path analysis, attack-technique mapping, ML anomaly detection.',
    domains: [{ domain: 'SECURE', role: 'threat hunting, indicator-of-compromise matching, attack path analysis, attack-technique mapping, ML anomaly detection', defaultAction: 'hunt' }],
    tierTag: null,
    availability: 'always_on',
    prCapable: false,
    capacity: 8,
    actions: [
      { name: 'hunt', tierTag: null, named: false, description: 'Match indicators of compromise in logs, map detections to ATT&CK techniques, flag anomalous event counts.' },
      { name: 'attack-paths', tierTag: null, named: false, requiresFeature: 'attack-path-analysis', description: 'Attack-path analysis over a described graph of assets.' },
    ],
  },
  // ------------------------------------------------------------------ GOVERN [ULTRA]
  {
    id: 'govern-ai',
    displayName: 'Govern',
    description: 'Governance audits, compliance validation (SOC2, HIPAA, PCI-DSS), regulatory reporting.',
    domains: [{ domain: 'GOVERN', role: 'governance audits, compliance validation (SOC2, HIPAA, PCI-DSS), regulatory reporting', defaultAction: 'compliance' }],
    tierTag: 'ULTRA',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'audit-trail', tierTag: 'ULTRA', named: true, description: 'Query and verify the hash-chained audit trail.' },
      { name: 'approval', tierTag: 'ULTRA', named: true, description: 'List pending approvals and grant or deny them.' },
      { name: 'compliance', tierTag: 'ULTRA', named: false, description: 'Validate the workspace against SOC2, HIPAA or PCI-DSS control checklists, with evidence found or missing.' },
    ],
  },
  {
    id: 'policy-ai',
    displayName: 'Policy',
    description: 'Policy definition, enforcement, validation of deployment configurations, automated remediation.',
    domains: [{ domain: 'GOVERN', role: 'policy definition, enforcement, validation of deployment configurations, automated remediation', defaultAction: 'check' }],
    tierTag: 'ULTRA',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'check', tierTag: 'ULTRA', named: true, description: 'Evaluate the configured policy rules against deployment configurations.' },
      { name: 'enforce', tierTag: 'ULTRA', named: true, description: 'Evaluate the policy rules and emit fixes for the violations.' },
    ],
  },
  {
    id: 'tenant-ai',
    displayName: 'Tenant',
    description: 'Tenant provisioning, isolation verification, quotas, cross-tenant security validation.',
    domains: [{ domain: 'GOVERN', role: 'tenant provisioning, isolation verification, quotas, cross-tenant security validation', defaultAction: 'check-isolation' }],
    tierTag: 'ULTRA',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'check-isolation', tierTag: 'ULTRA', named: true, description: "Verify that one tenant's data and API keys cannot reach another in Cadre's store." },
      { name: 'quotas', tierTag: 'ULTRA', named: true, description: 'Usage against quotas per tenant.' },
    ],
  },
  // ------------------------------------------------------------------ OPTIMIZE [PRO]
  {
    id: 'optimize-ai',
    displayName: 'Optimize',
    description: 'Performance analysis, bottlenecks, latency, throughput.',
    domains: [{ domain: 'OPTIMIZE', role: 'performance analysis, bottlenecks, latency, throughput', defaultAction: 'analyze' }],
    tierTag: 'PRO',
    availability: 'commercial',
    prCapable: true,
    actions: [
      { name: 'analyze', tierTag: 'PRO', named: true, description: 'Hot spots from a CPU profile or benchmark output.' },
      { name: 'benchmark', tierTag: 'PRO', named: true, description: 'Run a command N times and report min, median, max and a comparison.' },
    ],
  },
  {
    id: 'cost-ai',
    displayName: 'Cost',
    description: 'Cost analysis, rightsizing, reserved-capacity planning, waste.',
    domains: [{ domain: 'OPTIMIZE', role: 'cost analysis, rightsizing, reserved-capacity planning, waste', defaultAction: 'report' }],
    tierTag: 'PRO',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'report', tierTag: 'PRO', named: true, description: 'Cost breakdown from a usage or billing CSV.' },
      { name: 'optimize', tierTag: 'PRO', named: true, description: 'Waste, rightsizing candidates and reserved-capacity break-even.' },
    ],
  },
  {
    id: 'dba-ai',
    displayName: 'DBA',
    description: 'Database performance, query optimization, indexes, schema tuning.',
    domains: [{ domain: 'OPTIMIZE', role: 'database performance, query optimization, indexes, schema tuning', defaultAction: 'analyze-queries' }],
    tierTag: 'PRO',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'analyze-queries', tierTag: 'PRO', named: true, description: 'SQL anti-patterns in queries and code.' },
      { name: 'indexes', tierTag: 'PRO', named: true, description: "Index suggestions from the queries' predicates against a given schema." },
    ],
  },
  {
    id: 'billing-ai',
    displayName: 'Billing',
    description: 'Usage metering, billing reports, customer billing, forecasting.',
    domains: [{ domain: 'OPTIMIZE', role: 'usage metering, billing reports, customer billing, forecasting', defaultAction: 'usage' }],
    tierTag: 'PRO',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'usage', tierTag: 'PRO', named: true, description: "Metering of Cadre's executions per agent, tier and project." },
      { name: 'analytics', tierTag: 'PRO', named: true, description: 'Usage trends and forecasts.' },
    ],
  },
  // ------------------------------------------------------------------ EVOLVE [ULTRA]
  {
    id: 'adapt-ai',
    displayName: 'Adapt',
    description: 'Learns from feedback, adapts behavior.',
    domains: [{ domain: 'EVOLVE', role: 'learns from feedback, adapts behavior', defaultAction: 'evaluate' }],
    tierTag: 'ULTRA',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'feedback', tierTag: 'ULTRA', named: true, description: 'Record a rating of a result.' },
      { name: 'evaluate', tierTag: 'ULTRA', named: true, description: "How feedback changed each agent's thresholds and outcomes." },
    ],
  },
  {
    id: 'evolve-ai',
    displayName: 'Evolve',
    description: 'System maturity analysis, improvement recommendations, evolution metrics.',
    domains: [{ domain: 'EVOLVE', role: 'system maturity analysis, improvement recommendations, evolution metrics', defaultAction: 'assess' }],
    tierTag: 'ULTRA',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'assess', tierTag: 'ULTRA', named: true, description: 'A maturity score of the workspace with the evidence.' },
      { name: 'plan', tierTag: 'ULTRA', named: true, description: 'Ordered improvements from the assessment.' },
    ],
  },
  {
    id: 'success-ai',
    displayName: 'Success',
    description: 'Customer health scoring, recommendations, onboarding, retention.',
    domains: [{ domain: 'EVOLVE', role: 'customer health scoring, recommendations, onboarding, retention', defaultAction: 'health' }],
    tierTag: 'ULTRA',
    availability: 'commercial',
    prCapable: false,
    actions: [
      { name: 'health', tierTag: 'ULTRA', named: true, description: 'A customer health score from usage, failures and feedback.' },
      { name: 'engagement', tierTag: 'ULTRA', named: true, description: 'Engagement trends.' },
    ],
  },
] as const satisfies readonly AgentInput[];

/** Id of one of the 25 agents. */
export type AgentId = (typeof RAW_AGENTS)[number]['id'];

/** The 25 agents, validated and deep-frozen, in the order of the contract's domain table. */
export const AGENTS: readonly AgentDef[] = parseCatalogFile(CATALOG_FILES.agents, AgentsFileSchema, RAW_AGENTS);

const AGENT_ID_SET: ReadonlySet<string> = new Set(AGENTS.map((a) => a.id));

/** True when `id` names one of the catalog's agents. */
export function isAgentId(id: string): id is AgentId {
  return AGENT_ID_SET.has(id);
}
