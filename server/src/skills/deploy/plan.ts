/**
 * deploy-ai `plan`: a canary or blue-green deployment plan built from the workspace's deployment facts
 * (facts.ts), read-only. Ordered steps (pre-flight from an earlier deploy-ai readiness step of the same
 * execution, build, the strategy's traffic steps with bake times), health checks from the facts (or an
 * honest "no health endpoint found"), automatic rollback conditions with numbers, the rollback
 * procedure, and the command `deploy` would run (or what to add). Markdown in `text`, structure in `data`.
 * When coder-ai committed on a branch earlier in the execution, that branch and commit are what is deployed.
 */
import { existsSync } from 'node:fs';
import type { ReadinessCheck } from '../../../../protocol/lsp';
import type { Artifact, Evidence, Skill, SkillContext, StepSummary } from '../../engine/rigor/skill';
import { git, repoInfo } from '../coding/git';
import { coderBranchOf } from '../review/branch';
import { findDeployCommand, parseDeployInput, type DeployCommand, type Strategy } from './command';
import { deploymentFacts, factCount, factLines, type DeployFacts } from './facts';
import { deployInputSchema } from '../operate-inputs';

export interface PlanStep { n: number; name: string; detail: string; trafficPercent?: number; bakeMinutes?: number; commands?: string[] }
export interface PlanHealthCheck { source: string; file: string; line: number; check: string }
export interface RollbackCondition { metric: string; condition: string; window: string }
/** What is deployed: coder-ai's commit, or the workspace's HEAD. */
export interface DeployTarget { branch: string | null; commit: string | null; source: string; base?: string }

export interface PlanData {
  strategy: Strategy;
  environment: string;
  production: boolean;
  target: DeployTarget | null;
  preflight: { from: string | null; blockers: Array<Pick<ReadinessCheck, 'id' | 'title' | 'evidence'>>; unknown: Array<Pick<ReadinessCheck, 'id' | 'title' | 'evidence'>> };
  steps: PlanStep[];
  healthChecks: PlanHealthCheck[];
  /** Set when no health endpoint was found, with what to add. */
  noHealthEndpoint: string | null;
  rollbackConditions: RollbackCondition[];
  rollback: { procedure: string; commands: string[]; previousCommit: string | null };
  deployCommand: { command: string; source: string } | null;
  missingCommand: string | null;
  facts: string[];
}

/** Minutes each canary stage is watched before the next (longer for production). */
export const BAKE_MINUTES = { staging: 5, production: 15 } as const;
/** Minutes blue is kept after the switch (longer for production). */
export const BLUE_WINDOW_MINUTES = { staging: 30, production: 60 } as const;
export const CANARY_STAGES = [10, 50, 100] as const;

const SHA = /^[0-9a-f]{7,64}$/i;

/** The readiness checks of the latest deploy-ai readiness step before this one. */
export function readinessOf(previous: readonly StepSummary[]): { step: number; checks: ReadinessCheck[] } | undefined {
  const s = [...previous].reverse().find((x) => x.agentId === 'deploy-ai' && x.action === 'readiness');
  const checks = (s?.data as { checks?: unknown } | null | undefined)?.checks;
  if (!s || !Array.isArray(checks)) return undefined;
  return { step: s.step, checks: checks.filter((c): c is ReadinessCheck => !!c && typeof c === 'object' && typeof (c as ReadinessCheck).id === 'string' && typeof (c as ReadinessCheck).status === 'string') };
}

/** What is deployed: coder-ai's branch and commit when the execution has one, else the workspace's branch and HEAD. */
export async function deployTarget(ws: string, previous: readonly StepSummary[], signal?: AbortSignal): Promise<DeployTarget | null> {
  const coder = coderBranchOf(previous);
  if (coder) return { branch: coder.branch, commit: coder.commit, base: coder.base, source: `coder-ai step ${coder.step}` };
  const info = await repoInfo(ws);
  if (!info) return null;
  const branch = await git(ws, ['symbolic-ref', '-q', '--short', 'HEAD'], signal);
  return { branch: branch.code === 0 ? branch.stdout.trim() : null, commit: info.head ?? null, source: 'the workspace\'s HEAD' };
}

function healthChecks(f: DeployFacts): PlanHealthCheck[] {
  const out: PlanHealthCheck[] = [];
  for (const k of f.k8s) for (const p of k.probes) {
    const what = p.how === 'httpGet' ? `HTTP GET ${p.path}${p.port ? ` on port ${p.port}` : ''} answers 2xx/3xx` : `${p.how} probe${p.port ? ` on port ${p.port}` : ''}`;
    out.push({ source: `Kubernetes ${p.type}Probe of ${k.name}`, file: p.file, line: p.line, check: what });
  }
  for (const d of f.dockerfiles) if (d.healthcheck) out.push({ source: 'Dockerfile HEALTHCHECK', file: d.healthcheck.file, line: d.healthcheck.line, check: d.healthcheck.command });
  for (const c of f.compose) out.push({ source: `docker-compose healthcheck of ${c.service}`, file: c.file, line: c.line, check: c.test });
  const port = f.dockerfiles.find((d) => d.expose.length)?.expose[0];
  for (const h of f.healthRoutes) out.push({ source: 'health route in the sources', file: h.file, line: h.line, check: `HTTP GET ${h.path}${port ? ` on port ${port}` : ''} answers 2xx` });
  return out;
}

function rollbackConditions(hasHealth: boolean, k8s: boolean): RollbackCondition[] {
  return [
    { metric: 'HTTP 5xx rate', condition: 'above the baseline (the version before) + 1 percentage point', window: '5 minutes' },
    { metric: 'p95 latency', condition: 'above 1.25x the baseline', window: '5 minutes' },
    ...(hasHealth ? [{ metric: 'health check', condition: '3 consecutive failures (checked every 10 s)', window: '30 seconds' }] : []),
    ...(k8s ? [{ metric: 'pod restarts', condition: 'more than 2 restarts of a new pod (crash loop)', window: '10 minutes' }] : []),
  ];
}

export interface PlanInputs {
  strategy: Strategy;
  environment: string;
  production: boolean;
  facts: DeployFacts;
  command: DeployCommand | null;
  missingCommand: string | null;
  target: DeployTarget | null;
  readiness?: { step: number; checks: ReadinessCheck[] } | undefined;
  previousCommit?: string | null;
}

/** The plan, from facts only (no I/O). */
export function buildPlan(p: PlanInputs): PlanData {
  const f = p.facts;
  const checks = healthChecks(f);
  const k8s = f.k8s[0];
  const bake = p.production ? BAKE_MINUTES.production : BAKE_MINUTES.staging;
  const window = p.production ? BLUE_WINDOW_MINUTES.production : BLUE_WINDOW_MINUTES.staging;
  const what = p.target?.commit ? `${p.target.branch ? `branch ${p.target.branch} ` : ''}commit ${p.target.commit.slice(0, 12)} (${p.target.source})` : 'the workspace as it is (no git commit to name)';
  const conds = rollbackConditions(checks.length > 0, !!k8s);
  const condText = conds.map((c) => `${c.metric} ${c.condition} for ${c.window}`).join('; ');
  const healthText = checks.length ? checks.map((c) => c.check).join('; ') : 'no health endpoint: watch the error rate and latency only';
  const deployCmd = p.command?.command;
  const steps: PlanStep[] = [];
  const add = (s: Omit<PlanStep, 'n'>) => steps.push({ n: steps.length + 1, ...s });

  const blockers = (p.readiness?.checks ?? []).filter((c) => c.status === 'fail').map((c) => ({ id: c.id, title: c.title, evidence: c.evidence }));
  const unknown = (p.readiness?.checks ?? []).filter((c) => c.status === 'unknown').map((c) => ({ id: c.id, title: c.title, evidence: c.evidence }));
  add({
    name: 'Pre-flight',
    detail: p.readiness
      ? blockers.length ? `resolve the ${blockers.length} failing readiness check(s) of step ${p.readiness.step} first: ${blockers.map((b) => b.title).join(', ')}` : `readiness of step ${p.readiness.step}: no failing check${unknown.length ? ` (${unknown.length} unknown: ${unknown.map((u) => u.title).join(', ')})` : ''}`
      : 'run deploy-ai readiness (clean tree, branch pushed, tests, coverage, critical findings, review, approvals) and resolve every failing check',
  });
  const build = f.scripts.find((s) => s.name === 'build');
  const docker = f.dockerfiles[0];
  const buildCmds = [...(build ? ['npm run build'] : []), ...(docker ? [`docker build -f ${docker.file} -t ${f.packageName ?? k8s?.name ?? 'app'}:${p.target?.commit?.slice(0, 12) ?? 'next'} .`] : [])];
  add({ name: 'Build', detail: buildCmds.length ? `build ${what}${build ? ` (package.json:${build.line} "build": ${build.command})` : ''}${docker ? ` and its image (${docker.file})` : ''}` : `no build step found (no "build" script, no Dockerfile): ${what} is deployed as its sources`, commands: buildCmds });

  if (p.strategy === 'canary') {
    for (const pct of CANARY_STAGES) {
      const k8sHow = k8s && k8s.replicas ? ` (Kubernetes: a ${k8s.name}-canary Deployment with ${Math.max(1, Math.round((k8s.replicas * pct) / 100))} of ${k8s.replicas} replica(s), or a traffic split at the ingress)` : '';
      add({
        name: pct === 100 ? 'Promote to 100%' : pct === CANARY_STAGES[0] ? `Deploy the canary at ${pct}%` : `Promote the canary to ${pct}%`,
        detail: `${pct === CANARY_STAGES[0] ? `deploy ${what}${deployCmd ? ` with ${deployCmd}` : ''} to ${p.environment}, ` : ''}route ${pct}% of the traffic to the new version${k8sHow}; health checks: ${healthText}; bake ${bake} min and roll back automatically if ${condText}`,
        trafficPercent: pct, bakeMinutes: bake, ...(pct === CANARY_STAGES[0] && deployCmd ? { commands: [deployCmd] } : {}),
      });
    }
  } else {
    add({ name: 'Deploy green', detail: `deploy ${what}${deployCmd ? ` with ${deployCmd}` : ''} to ${p.environment} as "green", next to the running "blue", with no traffic`, trafficPercent: 0, ...(deployCmd ? { commands: [deployCmd] } : {}) });
    add({ name: 'Health-check green', detail: checks.length ? `on green only: ${healthText}; 3 consecutive passes, 10 s apart, before any traffic` : 'no health endpoint found: smoke-test green by hand (its main routes answer) before any traffic', trafficPercent: 0 });
    add({ name: 'Switch traffic to green', detail: `switch 100% of the traffic from blue to green; watch for ${bake} min and switch back automatically if ${condText}`, trafficPercent: 100, bakeMinutes: bake });
    add({ name: 'Keep blue for the rollback window', detail: `keep blue running, untouched, for ${window} min: switching back is the rollback; retire it afterwards`, trafficPercent: 100, bakeMinutes: window });
  }

  const previous = p.previousCommit ?? p.target?.base ?? null;
  const redeploy = `redeploy the previous commit${previous ? ` ${previous.slice(0, 12)}` : ' (the one deployed before: not known to Cadre, record it before deploying)'}${deployCmd ? ` with ${deployCmd}` : ''}`;
  const rollback = p.strategy === 'blue-green'
    ? { procedure: `switch the traffic back to blue (kept for ${window} min); after the window: ${redeploy}`, commands: k8s ? [`kubectl rollout undo deployment/${k8s.name}`] : [], previousCommit: previous }
    : k8s
      ? { procedure: `kubectl rollout undo deployment/${k8s.name} (and scale the canary to 0)`, commands: [`kubectl rollout undo deployment/${k8s.name}`, `kubectl scale deployment/${k8s.name}-canary --replicas=0`], previousCommit: previous }
      : { procedure: `route the traffic back to the previous version, then ${redeploy}`, commands: [], previousCommit: previous };

  add({ name: 'Verify', detail: `the new version serves 100% of ${p.environment}: compare the error rate and p95 latency with the baseline for ${bake} min more; the rollback procedure stays ready: ${rollback.procedure}` });

  return {
    strategy: p.strategy, environment: p.environment, production: p.production, target: p.target,
    preflight: { from: p.readiness ? `deploy-ai readiness (step ${p.readiness.step})` : null, blockers, unknown },
    steps, healthChecks: checks,
    noHealthEndpoint: checks.length ? null : 'no health endpoint found: no Kubernetes probe, Dockerfile HEALTHCHECK, compose healthcheck or /health, /healthz, /ready, /livez route in the sources; add a GET /health route that answers 200 when the service can serve',
    rollbackConditions: conds, rollback,
    deployCommand: p.command ? { command: p.command.command, source: p.command.source } : null,
    missingCommand: p.missingCommand,
    facts: factLines(f),
  };
}

/** Calibrated on what was found: a plan with a deploy command and a health check is confident (>= 0.75). */
/** What says the workspace is something one deploys: a start/build/serve/deploy script, a Dockerfile, manifests. */
export function deployableFacts(f: DeployFacts): number {
  return f.dockerfiles.length + f.k8s.length + f.compose.length + f.scripts.filter((s) => /^(start|build|serve|deploy(:.*)?)$/.test(s.name)).length;
}

/**
 * Confidence in the plan, calibrated on its evidence: the facts are read deterministically from the
 * workspace, so a plan of a deployable workspace starts confident (0.7); a deploy command, health
 * checks, readiness and the commit to deploy complete it. A gap of the project (no health endpoint,
 * no deploy command) is reported in the plan, not counted as doubt about the plan (issue 10: an agent
 * does not fail its own gate on a correct result).
 */
export function planConfidence(d: PlanData, _f: DeployFacts): number {
  let c = 0.7;
  if (d.deployCommand) c += 0.1;
  if (d.healthChecks.length) c += 0.1;
  if (d.preflight.from) c += 0.03;
  if (d.target?.commit) c += 0.02;
  return Math.round(Math.min(0.95, c) * 100) / 100;
}

export function renderPlan(d: PlanData): string {
  const out: string[] = [];
  out.push(`# Deployment plan: ${d.strategy} to ${d.environment}${d.production ? ' (production)' : ''}`, '');
  out.push(`**Deploys:** ${d.target?.commit ? `${d.target.branch ? `branch \`${d.target.branch}\`, ` : ''}commit \`${d.target.commit}\` (${d.target.source})` : 'the workspace as it is (not a git repository)'}`);
  out.push(`**Deploy command:** ${d.deployCommand ? `\`${d.deployCommand.command}\` — ${d.deployCommand.source}` : `none — ${d.missingCommand}`}`, '');
  if (d.preflight.blockers.length) {
    out.push('## Blockers (from readiness)', '');
    for (const b of d.preflight.blockers) out.push(`- ✗ ${b.title}: ${b.evidence}`);
    out.push('');
  }
  out.push('## Steps', '');
  for (const s of d.steps) {
    out.push(`${s.n}. **${s.name}**${s.trafficPercent !== undefined ? ` (traffic ${s.trafficPercent}%${s.bakeMinutes ? `, bake ${s.bakeMinutes} min` : ''})` : ''}: ${s.detail}`);
    for (const c of s.commands ?? []) out.push(`   - \`${c}\``);
  }
  out.push('', '## Health checks', '');
  if (d.healthChecks.length) for (const h of d.healthChecks) out.push(`- ${h.check} — ${h.source} (${h.file}:${h.line})`);
  else out.push(`- ${d.noHealthEndpoint}`);
  out.push('', '## Automatic rollback when', '');
  for (const c of d.rollbackConditions) out.push(`- ${c.metric}: ${c.condition}, for ${c.window}`);
  out.push('', '## Rollback procedure', '', `- ${d.rollback.procedure}`, ...d.rollback.commands.map((c) => `  - \`${c}\``));
  if (d.facts.length) out.push('', '## Facts', '', ...d.facts.map((l) => `- ${l}`));
  return out.join('\n');
}

interface Prepared { facts: DeployFacts }

/** Reads the facts, the command and the target, then builds the plan. */
export async function planFor(ws: string, ctx: SkillContext, facts?: DeployFacts): Promise<{ data: PlanData; facts: DeployFacts } | { needsInput: { field: string; message: string } }> {
  const input = parseDeployInput(ctx.request.input);
  if (!input.ok) return { needsInput: { field: input.field, message: input.message } };
  const f = facts ?? deploymentFacts(ws);
  const lookup = findDeployCommand(f, input.environment);
  const target = await deployTarget(ws, ctx.request.previous, ctx.signal);
  const prev = ctx.request.input['previousCommit'];
  const data = buildPlan({
    strategy: input.strategy, environment: input.environment, production: input.production, facts: f, command: lookup.command, missingCommand: lookup.missing,
    target, readiness: readinessOf(ctx.request.previous), previousCommit: typeof prev === 'string' && SHA.test(prev) ? prev : null,
  });
  return { data, facts: f };
}

function makePlanSkill(): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  return {
    agentId: 'deploy-ai',
    action: 'plan',
    inputSchema: deployInputSchema,
    needs: ['workspace'],
    async research(ctx) {
      const ws = ctx.request.workspace;
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to plan a deployment of'); return evidence; }
      const facts = deploymentFacts(ws);
      prepared.set(evidence, { facts });
      for (const line of factLines(facts).slice(0, 30)) evidence.items.push({ source: line.split(' ')[0]!, detail: line, weight: 0.5 });
      evidence.pathsRead.push(...facts.filesRead);
      evidence.constraints.push(...facts.refused);
      const ready = readinessOf(ctx.request.previous);
      if (ready) evidence.items.push({ source: `step ${ready.step} deploy-ai readiness`, detail: `${ready.checks.filter((c) => c.status === 'fail').length} failing readiness check(s)`, weight: 0.4 });
      const coder = coderBranchOf(ctx.request.previous);
      if (coder) evidence.items.push({ source: `step ${coder.step} coder-ai`, detail: `deploys branch ${coder.branch} (commit ${coder.commit.slice(0, 12)})`, weight: 0.5 });
      ctx.progress(40, factCount(facts) ? 0.6 : 0.3);
      return evidence;
    },
    propose(ctx) {
      if (!ctx.request.workspace) return [];
      // Read-only: the plan runs nothing and changes nothing.
      return [
        { kind: 'read', description: 'read package.json, Dockerfiles, Kubernetes and compose manifests and the sources\' health routes' },
        { kind: 'git_status', description: 'read the branch and commit to deploy' },
      ];
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) {
        const why = 'no workspace was given to plan a deployment of';
        return { kind: 'deployment-plan', summary: `deploy-ai plan: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, tokens: 0 };
      }
      const r = await planFor(ws, ctx, prepared.get(evidence)?.facts);
      if ('needsInput' in r) return { kind: 'deployment-plan', summary: `deploy-ai plan: ${r.needsInput.message}`, goalRef, confidence: 0, data: null, unable: r.needsInput.message, needsInput: { field: r.needsInput.field }, tokens: 0 };
      const { data, facts } = r;
      if (deployableFacts(facts) === 0 && !data.deployCommand) {
        // Nothing to deploy is "nothing to do", not a weak plan: the step is skipped with its reason.
        const why = `nothing deployable found in the workspace (no start, build or deploy script, Dockerfile, Kubernetes or compose manifest); ${data.missingCommand ?? 'add a deploy script'}`;
        return { kind: 'deployment-plan', summary: `deploy-ai plan: not applicable: ${why}`, goalRef, confidence: 1, data, notApplicable: why, tokens: 0 };
      }
      const confidence = planConfidence(data, facts);
      ctx.progress(100, confidence);
      const parts = [
        `${data.strategy} plan for ${data.environment}: ${data.steps.length} steps`,
        data.healthChecks.length ? `health checks: ${[...new Set(data.healthChecks.map((h) => h.check.split(' answers')[0]))].slice(0, 3).join(', ')}` : 'no health endpoint found',
        data.deployCommand ? `deploy command: ${data.deployCommand.command}` : 'no deploy command',
        ...(data.preflight.blockers.length ? [`${data.preflight.blockers.length} readiness blocker(s)`] : []),
        ...(data.target?.commit && data.target.source.startsWith('coder-ai') ? [`deploys coder-ai's branch ${data.target.branch} at ${data.target.commit.slice(0, 12)}`] : []),
      ];
      return { kind: 'deployment-plan', goalRef, confidence, data, tokens: 0, summary: parts.join('; '), text: renderPlan(data) };
    },
  };
}

export const planSkill: Skill = makePlanSkill();
