import assert from 'node:assert/strict';
import {
  catalog,
  DOMAIN_WORKFLOWS,
  domainWorkflowOf,
  findWorkflow,
  pipelineAgents,
  stepAction,
  stepDomain,
  WORKFLOW_PATTERNS,
  WORKFLOW_TEMPLATES,
  workflowsOfCapability,
  workflowTierTag,
} from '../../../server/src/engine/catalog';

/** Contract, "Domain workflows (agent order)". */
const DOMAIN_TABLE: Record<string, { capability: string; pipeline: string[] }> = {
  build: { capability: 'BUILD', pipeline: ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai'] },
  operate: { capability: 'OPERATE', pipeline: ['observe-ai', 'debug-ai', 'incident-ai', 'maintain-ai', 'review-ai', 'deploy-ai'] },
  secure: { capability: 'SECURE', pipeline: ['security-ai', 'threathunter-ai'] },
  govern: { capability: 'GOVERN', pipeline: ['govern-ai', 'policy-ai', 'tenant-ai'] },
  optimize: { capability: 'OPTIMIZE', pipeline: ['optimize-ai', 'cost-ai', 'dba-ai', 'billing-ai'] },
  evolve: { capability: 'EVOLVE', pipeline: ['adapt-ai', 'evolve-ai', 'success-ai'] },
};

/** Contract, "Cross-capability templates", in table order. */
const TEMPLATE_TABLE: Array<[string, string, string[]]> = [
  ['full-sdlc', 'Full SDLC', ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'tester-ai', 'review-ai', 'security-ai', 'deploy-ai', 'observe-ai']],
  ['incident-response', 'Incident Response', ['observe-ai', 'incident-ai', 'debug-ai', 'coder-ai', 'tester-ai', 'review-ai', 'security-ai', 'deploy-ai']],
  ['security-driven-refactoring', 'Security-Driven Refactoring', ['security-ai', 'threathunter-ai', 'coder-ai', 'tester-ai', 'review-ai', 'deploy-ai']],
  ['dependency-update-cascade', 'Dependency Update Cascade', ['security-ai', 'architect-ai', 'coder-ai', 'tester-ai', 'review-ai', 'deploy-ai']],
  ['compliance-audit-automation', 'Compliance Audit Automation', ['govern-ai', 'security-ai', 'policy-ai', 'observe-ai', 'backup-ai', 'tenant-ai', 'review-ai']],
  ['cost-anomaly-remediation', 'Cost Anomaly Remediation', ['cost-ai', 'observe-ai', 'capacity-ai', 'optimize-ai', 'coder-ai', 'deploy-ai', 'billing-ai']],
  ['performance-regression-fix', 'Performance Regression Fix', ['observe-ai', 'debug-ai', 'optimize-ai', 'dba-ai', 'coder-ai', 'tester-ai', 'deploy-ai']],
  ['technical-debt-prioritization', 'Technical Debt Prioritization', ['evolve-ai', 'optimize-ai', 'security-ai', 'architect-ai', 'planner-ai', 'coder-ai', 'tester-ai']],
  ['threat-to-incident-correlation', 'Threat-to-Incident Correlation', ['threathunter-ai', 'incident-ai', 'observe-ai', 'debug-ai']],
];

/** Capabilities each template spans (domains of its agents, in order of first appearance). */
const SPANS: Record<string, string[]> = {
  'full-sdlc': ['BUILD', 'SECURE', 'OPERATE'],
  'incident-response': ['OPERATE', 'BUILD', 'SECURE'],
  'security-driven-refactoring': ['SECURE', 'BUILD', 'OPERATE'],
  'dependency-update-cascade': ['SECURE', 'BUILD', 'OPERATE'],
  'compliance-audit-automation': ['GOVERN', 'SECURE', 'OPERATE'],
  'cost-anomaly-remediation': ['OPTIMIZE', 'OPERATE', 'BUILD'],
  'performance-regression-fix': ['OPERATE', 'OPTIMIZE', 'BUILD'],
  'technical-debt-prioritization': ['EVOLVE', 'OPTIMIZE', 'SECURE', 'BUILD'],
  'threat-to-incident-correlation': ['SECURE', 'OPERATE'],
};

describe('catalog: workflows', () => {
  it('has the six domain workflows with the contract pipelines in exact order', () => {
    assert.deepEqual(DOMAIN_WORKFLOWS.map((w) => w.id), Object.keys(DOMAIN_TABLE));
    for (const wf of DOMAIN_WORKFLOWS) {
      const expected = DOMAIN_TABLE[wf.id];
      assert.ok(expected, wf.id);
      assert.deepEqual(wf.capabilities, [expected.capability], wf.id);
      assert.deepEqual(pipelineAgents(wf), expected.pipeline, wf.id);
      assert.equal(domainWorkflowOf(expected.capability as 'BUILD').id, wf.id);
    }
  });

  it('records the notes of the domain table: debug-ai as needed, background agents, event-driven, correlation', () => {
    const build = domainWorkflowOf('BUILD');
    assert.equal(build.pipeline.at(-1)?.agent, 'debug-ai');
    assert.equal(build.pipeline.at(-1)?.condition, 'as_needed');
    assert.ok(build.pipeline.slice(0, -1).every((s) => s.condition === 'always'));

    const operate = domainWorkflowOf('OPERATE');
    assert.deepEqual(operate.background, ['capacity-ai', 'backup-ai']);
    assert.equal(operate.trigger, 'event_driven');
    assert.deepEqual(operate.pipeline.map((s) => s.stage), ['detect', 'diagnose', 'coordinate', 'fix', 'verify', 'ship']);

    const secure = domainWorkflowOf('SECURE');
    assert.equal(secure.finalize, 'correlate-findings');
    assert.ok(catalog.workflows.filter((w) => w.id !== 'secure').every((w) => w.finalize === null));
  });

  it('has the nine templates with the contract pipelines in exact order', () => {
    assert.deepEqual(WORKFLOW_TEMPLATES.map((w) => [w.id, w.displayName, pipelineAgents(w)]), TEMPLATE_TABLE);
    assert.deepEqual(catalog.workflows.map((w) => w.id), [...Object.keys(DOMAIN_TABLE), ...TEMPLATE_TABLE.map((t) => t[0])]);
  });

  it('records the capabilities each template spans', () => {
    for (const wf of WORKFLOW_TEMPLATES) assert.deepEqual(wf.capabilities, SPANS[wf.id], wf.id);
  });

  it('deploys the dependency update cascade by canary', () => {
    const deploy = findWorkflow('dependency-update-cascade')?.pipeline.at(-1);
    assert.equal(deploy?.agent, 'deploy-ai');
    assert.deepEqual(deploy?.params, { strategy: 'canary' });
  });

  it('gives every workflow a known pattern with a reason, and a lead where the pattern needs one', () => {
    for (const wf of catalog.workflows) {
      assert.ok((WORKFLOW_PATTERNS as readonly string[]).includes(wf.pattern), wf.id);
      assert.ok(wf.patternReason.length > 20, wf.id);
      if (wf.pattern === 'hierarchical' || wf.pattern === 'debate') assert.ok(wf.lead !== null, wf.id);
      if (wf.lead !== null) assert.ok(pipelineAgents(wf).includes(wf.lead), wf.id);
    }
    const patterns = Object.fromEntries(WORKFLOW_TEMPLATES.map((w) => [w.id, w.pattern]));
    assert.deepEqual(patterns, {
      'full-sdlc': 'sequential',
      'incident-response': 'hierarchical',
      'security-driven-refactoring': 'sequential',
      'dependency-update-cascade': 'sequential',
      'compliance-audit-automation': 'parallel',
      'cost-anomaly-remediation': 'sequential',
      'performance-regression-fix': 'sequential',
      'technical-debt-prioritization': 'debate',
      'threat-to-incident-correlation': 'group_chat',
    });
  });

  it('finds workflows by id or alias, case-insensitively; generate-code is BUILD', () => {
    assert.equal(findWorkflow('full-sdlc')?.id, 'full-sdlc');
    assert.equal(findWorkflow('generate-code')?.id, 'build');
    assert.equal(findWorkflow(' Generate-Code ')?.id, 'build');
    assert.equal(findWorkflow('BUILD')?.id, 'build');
    assert.equal(findWorkflow('nope'), undefined);
    assert.equal(catalog.workflowsByName.get('generate-code')?.id, 'build');
    assert.equal(catalog.workflowsById.get('generate-code'), undefined);
  });

  it('plays shared agents in the right role per step', () => {
    const ir = findWorkflow('incident-response');
    const sdlc = findWorkflow('full-sdlc');
    assert.ok(ir && sdlc);
    const step = (wf: typeof ir, agent: string) => wf.pipeline.find((s) => s.agent === agent)!;
    assert.equal(stepDomain(ir, step(ir, 'debug-ai')), 'OPERATE');
    assert.equal(stepAction(ir, step(ir, 'debug-ai')), 'root-cause');
    assert.equal(stepAction(ir, step(ir, 'review-ai')), 'verify');
    assert.equal(stepAction(ir, step(ir, 'coder-ai')), 'fix');
    assert.equal(stepDomain(sdlc, step(sdlc, 'review-ai')), 'BUILD');
    assert.equal(stepAction(sdlc, step(sdlc, 'review-ai')), 'review');
    const build = domainWorkflowOf('BUILD');
    assert.equal(stepAction(build, step(build, 'debug-ai')), 'explain');
    for (const wf of catalog.workflows) for (const s of wf.pipeline) assert.ok(stepAction(wf, s).length > 0);
  });

  it('tells which tier a workflow needs and which workflows span a capability', () => {
    assert.equal(workflowTierTag(findWorkflow('full-sdlc')!), null);
    assert.equal(workflowTierTag(findWorkflow('cost-anomaly-remediation')!), 'PRO');
    assert.equal(workflowTierTag(findWorkflow('compliance-audit-automation')!), 'ULTRA');
    assert.equal(workflowTierTag(findWorkflow('technical-debt-prioritization')!), 'ULTRA');
    assert.deepEqual(workflowsOfCapability('GOVERN').map((w) => w.id), ['govern', 'compliance-audit-automation']);
    assert.ok(workflowsOfCapability('PLATFORM').some((w) => w.id === 'secure'));
  });
});
