/**
 * Workflows (contract: "Workflows and orchestration"): the six domain workflows run by the domain
 * orchestrators (tier 1) and the nine cross-capability templates run by the meta-orchestrator
 * (tier 2). Each pipeline is the contract's table row in its exact order; the agent set is fixed.
 *
 * The contract does not give the execution pattern of a template; each entry records Cadre's choice
 * and the reason (`patternReason`). Pattern semantics are documented on WORKFLOW_PATTERNS in schema.ts.
 * The contract's example workflow name `generate-code` is an alias of the BUILD domain workflow.
 */
import { EngineError } from '../errors';
import type { Capability, Domain } from './enums';
import { domainsOfCapability } from './domains';
import { CATALOG_FILES, WorkflowsFileSchema, parseCatalogFile, type WorkflowDef, type WorkflowInput } from './schema';

const RAW_WORKFLOWS = [
  // ------------------------------------------------------------------ domain workflows (tier 1)
  {
    id: 'build',
    kind: 'domain',
    displayName: 'BUILD',
    description: 'Requirements to reviewed, tested code; debug-ai joins when a step fails.',
    aliases: ['generate-code'],
    capabilities: ['BUILD'],
    pipeline: [
      { agent: 'req-ai' },
      { agent: 'planner-ai' },
      { agent: 'architect-ai' },
      { agent: 'coder-ai' },
      { agent: 'review-ai' },
      { agent: 'tester-ai' },
      { agent: 'debug-ai', condition: 'as_needed', note: 'as needed: runs when a review or test step fails, then the failed step is retried' },
    ],
    pattern: 'sequential',
    patternReason: 'Each stage consumes the artifact of the one before (stories, plan, design, code, review, tests).',
  },
  {
    id: 'operate',
    kind: 'domain',
    displayName: 'OPERATE',
    description: 'Event-driven detect, diagnose, coordinate, fix, verify, ship; capacity and backups run in the background.',
    capabilities: ['OPERATE'],
    pipeline: [
      { agent: 'observe-ai', stage: 'detect' },
      { agent: 'debug-ai', stage: 'diagnose' },
      { agent: 'incident-ai', stage: 'coordinate' },
      { agent: 'maintain-ai', stage: 'fix' },
      { agent: 'review-ai', stage: 'verify' },
      { agent: 'deploy-ai', stage: 'ship' },
    ],
    background: ['capacity-ai', 'backup-ai'],
    trigger: 'event_driven',
    pattern: 'hierarchical',
    lead: 'incident-ai',
    patternReason: 'The contract gives incident-ai the coordinate stage: it owns the chain of fix, verify and ship (named in its escalations); retries and escalation follow the orchestrator\'s rules.',
  },
  {
    id: 'secure',
    kind: 'domain',
    displayName: 'SECURE',
    description: 'Security scanning and threat hunting, then correlation of their findings.',
    capabilities: ['SECURE'],
    pipeline: [{ agent: 'security-ai' }, { agent: 'threathunter-ai' }],
    finalize: 'correlate-findings',
    pattern: 'parallel',
    patternReason: 'The two scans read the same input independently; the orchestrator correlates both result sets at the end.',
  },
  {
    id: 'govern',
    kind: 'domain',
    displayName: 'GOVERN',
    description: 'Governance audit, policy checks, tenant isolation.',
    capabilities: ['GOVERN'],
    pipeline: [{ agent: 'govern-ai' }, { agent: 'policy-ai' }, { agent: 'tenant-ai' }],
    pattern: 'sequential',
    patternReason: 'Policy checks scope themselves to the audit findings, and tenant checks to the policies in force.',
  },
  {
    id: 'optimize',
    kind: 'domain',
    displayName: 'OPTIMIZE',
    description: 'Performance, cost, database and billing analyses.',
    capabilities: ['OPTIMIZE'],
    pipeline: [{ agent: 'optimize-ai' }, { agent: 'cost-ai' }, { agent: 'dba-ai' }, { agent: 'billing-ai' }],
    pattern: 'parallel',
    patternReason: 'The four analyses read different sources (profiles, cost data, SQL, metering) and do not depend on each other.',
  },
  {
    id: 'evolve',
    kind: 'domain',
    displayName: 'EVOLVE',
    description: 'Feedback evaluation, maturity assessment, customer health.',
    capabilities: ['EVOLVE'],
    pipeline: [{ agent: 'adapt-ai' }, { agent: 'evolve-ai' }, { agent: 'success-ai' }],
    pattern: 'sequential',
    patternReason: 'Maturity assessment uses the evaluated feedback, and customer health uses both.',
  },
  // ------------------------------------------------------------------ cross-capability templates (tier 2)
  {
    id: 'full-sdlc',
    kind: 'template',
    displayName: 'Full SDLC',
    description: 'Requirements to production monitoring.',
    capabilities: ['BUILD', 'SECURE', 'OPERATE'],
    pipeline: [
      { agent: 'req-ai' },
      { agent: 'planner-ai' },
      { agent: 'architect-ai' },
      { agent: 'coder-ai' },
      { agent: 'tester-ai' },
      { agent: 'review-ai', domain: 'BUILD' },
      { agent: 'security-ai' },
      { agent: 'deploy-ai' },
      { agent: 'observe-ai' },
    ],
    pattern: 'sequential',
    patternReason: 'A strict artifact chain: every stage needs the previous one, and deployment must follow review and the security scan.',
  },
  {
    id: 'incident-response',
    kind: 'template',
    displayName: 'Incident Response',
    description: 'Detect, triage, root cause, fix, test, review, scan, deploy to staging.',
    capabilities: ['OPERATE', 'BUILD', 'SECURE'],
    pipeline: [
      { agent: 'observe-ai', stage: 'detect' },
      { agent: 'incident-ai', stage: 'triage' },
      { agent: 'debug-ai', domain: 'OPERATE', stage: 'root cause' },
      { agent: 'coder-ai', stage: 'fix', action: 'fix' },
      { agent: 'tester-ai' },
      { agent: 'review-ai', domain: 'OPERATE', stage: 'review', note: 'code, CI and coverage (90% for incident-fix pull requests)' },
      { agent: 'security-ai' },
      { agent: 'deploy-ai', stage: 'deploy', params: { environment: 'staging' } },
    ],
    pattern: 'hierarchical',
    lead: 'incident-ai',
    patternReason: 'incident-ai owns triage, severity and escalation, so it owns the fix chain (named in its escalations); retries and escalation follow the orchestrator\'s rules.',
  },
  {
    id: 'security-driven-refactoring',
    kind: 'template',
    displayName: 'Security-Driven Refactoring',
    description: 'Refactor code to remove security findings ranked by exploitability.',
    capabilities: ['SECURE', 'BUILD', 'OPERATE'],
    pipeline: [
      { agent: 'security-ai' },
      { agent: 'threathunter-ai' },
      { agent: 'coder-ai', action: 'refactor' },
      { agent: 'tester-ai' },
      { agent: 'review-ai', domain: 'BUILD' },
      { agent: 'deploy-ai' },
    ],
    pattern: 'sequential',
    patternReason: 'threathunter-ai ranks the security findings by attack path, the refactoring works on that ranking, and tests, review and deployment follow.',
  },
  {
    id: 'dependency-update-cascade',
    kind: 'template',
    displayName: 'Dependency Update Cascade',
    description: 'Vulnerable or outdated dependency through impact analysis to a canary deployment.',
    capabilities: ['SECURE', 'BUILD', 'OPERATE'],
    pipeline: [
      { agent: 'security-ai' },
      { agent: 'architect-ai', action: 'validate' },
      { agent: 'coder-ai', action: 'fix' },
      { agent: 'tester-ai' },
      { agent: 'review-ai', domain: 'BUILD' },
      { agent: 'deploy-ai', params: { strategy: 'canary' }, note: 'deployment by canary' },
    ],
    pattern: 'sequential',
    patternReason: 'A cascade: each update is checked for architectural impact before it is applied, and every later step gates the next.',
  },
  {
    id: 'compliance-audit-automation',
    kind: 'template',
    displayName: 'Compliance Audit Automation',
    description: 'Collect compliance evidence across governance, security, operations and tenancy, then review it.',
    capabilities: ['GOVERN', 'SECURE', 'OPERATE'],
    pipeline: [
      { agent: 'govern-ai' },
      { agent: 'security-ai' },
      { agent: 'policy-ai' },
      { agent: 'observe-ai' },
      { agent: 'backup-ai', action: 'verify' },
      { agent: 'tenant-ai' },
      { agent: 'review-ai', domain: 'OPERATE' },
    ],
    pattern: 'parallel',
    lead: 'review-ai',
    patternReason: 'The six evidence collectors check independent control families; review-ai runs last as the aggregator over all of them.',
  },
  {
    id: 'cost-anomaly-remediation',
    kind: 'template',
    displayName: 'Cost Anomaly Remediation',
    description: 'From a cost anomaly to a deployed optimisation and its billing effect.',
    capabilities: ['OPTIMIZE', 'OPERATE', 'BUILD'],
    pipeline: [
      { agent: 'cost-ai' },
      { agent: 'observe-ai' },
      { agent: 'capacity-ai', action: 'recommend' },
      { agent: 'optimize-ai' },
      { agent: 'coder-ai', action: 'fix' },
      { agent: 'deploy-ai' },
      { agent: 'billing-ai' },
    ],
    pattern: 'sequential',
    patternReason: 'Each step narrows the anomaly (cost, usage, capacity, hot spot) before a change is made, and billing measures the deployed change.',
  },
  {
    id: 'performance-regression-fix',
    kind: 'template',
    displayName: 'Performance Regression Fix',
    description: 'Detect a regression, find its cause, fix, test and deploy.',
    capabilities: ['OPERATE', 'OPTIMIZE', 'BUILD'],
    pipeline: [
      { agent: 'observe-ai' },
      { agent: 'debug-ai', domain: 'OPERATE' },
      { agent: 'optimize-ai' },
      { agent: 'dba-ai' },
      { agent: 'coder-ai', action: 'fix' },
      { agent: 'tester-ai' },
      { agent: 'deploy-ai' },
    ],
    pattern: 'sequential',
    patternReason: 'Diagnosis narrows the regression step by step (trace, profile, queries) before the fix, which is tested before deployment.',
  },
  {
    id: 'technical-debt-prioritization',
    kind: 'template',
    displayName: 'Technical Debt Prioritization',
    description: 'A ranked technical-debt backlog from maturity, performance, security and architecture views.',
    capabilities: ['EVOLVE', 'OPTIMIZE', 'SECURE', 'BUILD'],
    pipeline: [
      { agent: 'evolve-ai' },
      { agent: 'optimize-ai' },
      { agent: 'security-ai' },
      { agent: 'architect-ai', action: 'validate' },
      { agent: 'planner-ai' },
      { agent: 'coder-ai' },
      { agent: 'tester-ai', action: 'coverage' },
    ],
    pattern: 'debate',
    lead: 'planner-ai',
    patternReason: 'Prioritisation weighs competing claims (maturity, performance, security, architecture, effort, test risk); planner-ai judges and writes the ranked plan.',
  },
  {
    id: 'threat-to-incident-correlation',
    kind: 'template',
    displayName: 'Threat-to-Incident Correlation',
    description: 'Correlate threat detections with incidents, metrics and traces.',
    capabilities: ['SECURE', 'OPERATE'],
    pipeline: [
      { agent: 'threathunter-ai' },
      { agent: 'incident-ai' },
      { agent: 'observe-ai' },
      { agent: 'debug-ai', domain: 'OPERATE' },
    ],
    pattern: 'group_chat',
    lead: 'incident-ai',
    patternReason: 'Correlation is iterative: an indicator prompts a metrics query, which prompts a trace lookup, and so on; the rounds stop when one adds nothing new.',
  },
] as const satisfies readonly WorkflowInput[];

/** Id of a domain workflow or template. */
export type WorkflowId = (typeof RAW_WORKFLOWS)[number]['id'];

/** The six domain workflows then the nine templates, in the contract's table order. */
export const WORKFLOWS: readonly WorkflowDef[] = parseCatalogFile(CATALOG_FILES.workflows, WorkflowsFileSchema, RAW_WORKFLOWS);

/** Domain workflows in table order. */
export const DOMAIN_WORKFLOWS: readonly WorkflowDef[] = Object.freeze(WORKFLOWS.filter((w) => w.kind === 'domain'));

/** Cross-capability templates in table order. */
export const WORKFLOW_TEMPLATES: readonly WorkflowDef[] = Object.freeze(WORKFLOWS.filter((w) => w.kind === 'template'));

function normalizeName(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * The workflow named by an id or alias, case-insensitive (`full-sdlc`, `generate-code`, `BUILD`);
 * undefined when none matches.
 */
export function findWorkflow(idOrAlias: string): WorkflowDef | undefined {
  const name = normalizeName(idOrAlias);
  return WORKFLOWS.find((w) => w.id === name || w.aliases.includes(name));
}

/** The domain workflow of `domain`. */
export function domainWorkflowOf(domain: Domain): WorkflowDef {
  const wf = DOMAIN_WORKFLOWS.find((w) => w.capabilities[0] === domain);
  // Unreachable: index.ts checks that every domain has its workflow.
  if (wf === undefined) throw new EngineError('ERR_INTERNAL', `no domain workflow for ${domain}`);
  return wf;
}

/** Workflows that span `cap` (PLATFORM: any of BUILD, OPERATE, SECURE), in table order. */
export function workflowsOfCapability(cap: Capability): WorkflowDef[] {
  const domains = domainsOfCapability(cap);
  return WORKFLOWS.filter((w) => w.capabilities.some((c) => domains.includes(c)));
}

/** Agent ids of a workflow's pipeline, in order (background agents excluded). */
export function pipelineAgents(workflow: WorkflowDef): string[] {
  return workflow.pipeline.map((s) => s.agent);
}
