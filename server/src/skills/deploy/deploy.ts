/**
 * deploy-ai `deploy`: runs the workspace's deploy command for an environment, once, when ACMF allows it.
 *
 *  - The command: package.json `deploy:<env>`, else `deploy`; else `kubectl apply -f <manifests dir>`
 *    when kubectl is on PATH (command.ts). None: the step is not applicable, naming what to add — a
 *    project without a deploy target lets full-sdlc go on.
 *  - The action kind proposed is `deploy_production` for production, `deploy_staging` for any other
 *    environment; ACMF rates it and the step runs it only when allowed (or approved).
 *  - The run goes through the side-effect ledger (`ctx.once`, key per execution, step and environment):
 *    a retried or resumed step gets the recorded outcome and never deploys twice. After a crash between
 *    intent and outcome, the deploy is not repeated blindly: the step reports that its outcome is unknown.
 *  - It runs in coder-ai's commit, checked out in a temporary worktree, when the execution has a coder-ai
 *    branch; else in the workspace. Process group, timeout, bounded output, no CADRE_ variables
 *    (testing/runner.ts).
 *  - A health check after it only for an `input.healthUrl` on 127.0.0.1 / localhost / ::1, and only when
 *    ACMF allows `http_request`; otherwise the artifact says it was not checked.
 *  - A non-zero exit is a failed deploy: the step ends in error with the tail of the output, every
 *    secret the scanner recognises in it redacted. Success is never invented.
 */
import { existsSync } from 'node:fs';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { checkoutState, git } from '../coding/git';
import { coderBranchOf, type CoderBranch } from '../review/branch';
import { scanText } from '../security/scanner';
import { runCommand } from '../testing/runner';
import { checkoutCommit } from '../testing/worktree';
import { findDeployCommand, parseDeployInput, type DeployCommand } from './command';
import { deploymentFacts, factLines, type DeployFacts } from './facts';
import { deployTarget, type DeployTarget } from './plan';
import { deployInputSchema } from '../operate-inputs';

export const DEFAULT_DEPLOY_TIMEOUT_MS = 15 * 60 * 1000;
const OUTPUT_TAIL_LINES = 40;
const SHA = /^[0-9a-f]{7,64}$/i;

/** What the ledger records for a deploy run (JSON: it is stored and handed back on a retry). */
export interface DeployRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  spawnError: string | null;
  durationMs: number;
  /** Last lines of stdout + stderr, secrets redacted. */
  outputTail: string;
  truncated: boolean;
  /** Where it ran: a temporary worktree of coder-ai's commit, or the workspace. */
  ranIn: 'worktree' | 'workspace';
  commit: string | null;
  /** Workspace files the run changed (git status before and after; runs in the workspace only). */
  workspaceChanged: string[] | null;
  /** Set by the reconcile after a crash: the run may or may not have happened. */
  interrupted?: true;
}

export interface HealthResult { url: string; checked: boolean; ok: boolean | null; status: number | null; attempts: number; note: string }

export interface DeployData {
  environment: string;
  production: boolean;
  actionKind: 'deploy_staging' | 'deploy_production';
  command: { command: string; source: string } | null;
  target: DeployTarget | null;
  run: DeployRun | null;
  health: HealthResult;
  rollback: { kind: 'revert' | 'none_needed'; ref: string; basis: string };
  facts: string[];
}

/** Each line of `text` on which the secret scanner finds a secret is replaced, naming the rule only. */
export function redactOutput(text: string): string {
  const findings = scanText(text, 'deploy-output.log', { suppressions: false });
  if (!findings.length) return text;
  const lines = text.split('\n');
  for (const f of findings) for (let l = f.range.startLine; l <= f.range.endLine; l++) lines[l - 1] = `[line redacted: ${f.ruleId}]`;
  return lines.join('\n');
}

/** A loopback http(s) URL (127.0.0.0/8, localhost, ::1), or why not. */
export function loopbackUrl(raw: unknown): { ok: true; url: URL } | { ok: false; why: string } {
  if (typeof raw !== 'string' || !raw.trim()) return { ok: false, why: 'no healthUrl given' };
  let u: URL;
  try { u = new URL(raw.trim()); } catch { return { ok: false, why: 'healthUrl is not a URL' }; }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, why: `healthUrl must be http(s), not ${u.protocol}` };
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host)) return { ok: true, url: u };
  return { ok: false, why: `healthUrl ${u.host} is not on 127.0.0.1 or localhost: only a local health check is made` };
}

async function healthCheck(url: URL, signal: AbortSignal, attempts = 5, everyMs = 1000): Promise<HealthResult> {
  let last = 'no answer';
  let status: number | null = null;
  for (let i = 1; i <= attempts; i++) {
    try {
      const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(5000)]), redirect: 'manual' });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 400) return { url: url.href, checked: true, ok: true, status, attempts: i, note: `GET ${url.href} answered ${res.status}` };
      last = `answered ${res.status}`;
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      last = (e as Error).message;
    }
    if (i < attempts) await new Promise((r) => setTimeout(r, everyMs));
  }
  return { url: url.href, checked: true, ok: false, status, attempts, note: `GET ${url.href} ${last} (${attempts} attempt(s))` };
}

interface Prepared { facts: DeployFacts; command: DeployCommand | null; missing: string | null }

function prepare(ws: string, environment: string): Prepared {
  const facts = deploymentFacts(ws);
  const lookup = findDeployCommand(facts, environment);
  return { facts, command: lookup.command, missing: lookup.missing };
}

const kindFor = (production: boolean) => (production ? 'deploy_production' : 'deploy_staging') as 'deploy_staging' | 'deploy_production';

async function statusFiles(ws: string): Promise<Map<string, string> | null> {
  const r = await git(ws, ['status', '--porcelain', '--untracked-files=all', '--', '.']);
  if (r.code !== 0) return null;
  return new Map(r.stdout.split('\n').filter(Boolean).map((l) => [l.slice(3), l.slice(0, 2)]));
}

/** Runs the command in `dir`; never throws for a failed command (it is the outcome). */
async function runIn(ctx: SkillContext, cmd: DeployCommand, dir: string, environment: string, timeoutMs: number): Promise<Omit<DeployRun, 'ranIn' | 'commit' | 'workspaceChanged'>> {
  const r = await runCommand(cmd.argv, { cwd: dir, timeoutMs, signal: ctx.signal, env: { DEPLOY_ENVIRONMENT: environment } });
  if (r.aborted) throw ctx.signal.reason ?? new Error('aborted');
  const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
  return { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, spawnError: r.spawnError ?? null, durationMs: r.durationMs, outputTail: redactOutput(tail), truncated: r.truncated };
}

async function execute(ctx: SkillContext, ws: string, cmd: DeployCommand, environment: string, coder: CoderBranch | undefined, target: DeployTarget | null, timeoutMs: number): Promise<DeployRun> {
  if (coder) {
    const checkout = await checkoutCommit(ws, coder.commit, ctx.signal).catch((e: unknown) => {
      throw new Error(`could not check out coder-ai's commit ${coder.commit.slice(0, 12)} (branch ${coder.branch}) in a temporary worktree: ${(e as Error).message}`);
    });
    try {
      return { ...(await runIn(ctx, cmd, checkout.dir, environment, timeoutMs)), ranIn: 'worktree', commit: coder.commit, workspaceChanged: null };
    } finally {
      await checkout.remove();
    }
  }
  const before = await statusFiles(ws);
  const run = await runIn(ctx, cmd, ws, environment, timeoutMs);
  const after = await statusFiles(ws);
  const changed = before && after ? [...after].filter(([f, s]) => before.get(f) !== s).map(([f]) => f).concat([...before.keys()].filter((f) => !after.has(f))) : null;
  return { ...run, ranIn: 'workspace', commit: target?.commit ?? null, workspaceChanged: changed };
}

/** The commit to go back to: given, coder-ai's base, else the parent of the deployed commit (said so). */
async function rollbackOf(ws: string, input: Record<string, unknown>, target: DeployTarget | null, run: DeployRun): Promise<DeployData['rollback']> {
  const given = input['previousCommit'];
  if (typeof given === 'string' && SHA.test(given)) return { kind: 'revert', ref: given, basis: 'input.previousCommit: the commit deployed before' };
  if (target?.base) return { kind: 'revert', ref: target.base, basis: `coder-ai's base commit: what ${target.branch} was branched from` };
  if (target?.commit) {
    const parent = await git(ws, ['rev-parse', '--verify', '-q', `${target.commit}^`]);
    if (parent.code === 0) return { kind: 'revert', ref: parent.stdout.trim(), basis: `the parent of the deployed commit ${target.commit.slice(0, 12)} (nothing recorded which commit was deployed before; pass input.previousCommit to name it)` };
  }
  if (run.workspaceChanged && run.workspaceChanged.length === 0) return { kind: 'none_needed', ref: 'no earlier commit known; the workspace is unchanged by the run', basis: 'no commit to go back to' };
  return { kind: 'none_needed', ref: 'no earlier commit known', basis: 'no commit to go back to' };
}

function renderDeploy(d: DeployData): string {
  const out = [`# Deploy to ${d.environment}${d.production ? ' (production)' : ''}`, ''];
  if (d.command) out.push(`Command: \`${d.command.command}\` — ${d.command.source}`);
  if (d.target?.commit) out.push(`Deployed: ${d.target.branch ? `branch ${d.target.branch}, ` : ''}commit ${d.target.commit} (${d.target.source})`);
  if (d.run) {
    out.push(`Ran in: ${d.run.ranIn === 'worktree' ? 'a temporary worktree of that commit (removed after the run)' : 'the workspace'}; exit code ${d.run.exitCode ?? 'none'}${d.run.timedOut ? ' (timed out, process tree killed)' : ''}; ${d.run.durationMs} ms`);
    if (d.run.workspaceChanged?.length) out.push(`The run changed ${d.run.workspaceChanged.length} workspace file(s): ${d.run.workspaceChanged.slice(0, 10).join(', ')}`);
  }
  out.push(`Health: ${d.health.note}`);
  out.push(`Rollback: ${d.rollback.kind} ${d.rollback.ref} (${d.rollback.basis})`);
  if (d.run?.outputTail) out.push('', 'Output (last lines):', '```', d.run.outputTail, '```');
  return out.join('\n');
}

function makeDeploySkill(): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  const get = (ctx: SkillContext, evidence: Evidence, environment: string): Prepared | undefined => {
    const ws = ctx.request.workspace;
    // Evidence read back from a checkpoint is a copy: look the command up again.
    return prepared.get(evidence) ?? (ws && existsSync(ws) ? prepare(ws, environment) : undefined);
  };
  return {
    agentId: 'deploy-ai',
    action: 'deploy',
    inputSchema: deployInputSchema,
    needs: ['workspace'],
    async research(ctx) {
      const ws = ctx.request.workspace;
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to deploy'); return evidence; }
      const input = parseDeployInput(ctx.request.input);
      if (!input.ok) { evidence.constraints.push(input.message); return evidence; }
      const p = prepare(ws, input.environment);
      prepared.set(evidence, p);
      evidence.pathsRead.push(...p.facts.filesRead);
      evidence.constraints.push(...p.facts.refused);
      if (p.command) evidence.items.push({ source: p.command.file, detail: `deploy command for ${input.environment}: ${p.command.command} (${p.command.source})`, weight: 0.8 });
      else evidence.constraints.push(p.missing ?? 'no deploy command');
      const coder = coderBranchOf(ctx.request.previous);
      if (coder) evidence.items.push({ source: `step ${coder.step} coder-ai`, detail: `deploys branch ${coder.branch} (commit ${coder.commit.slice(0, 12)}) from a temporary worktree`, weight: 0.5 });
      ctx.progress(30, p.command ? 0.6 : 0.3);
      return evidence;
    },
    propose(ctx, evidence) {
      const input = parseDeployInput(ctx.request.input);
      if (!ctx.request.workspace || !input.ok) return [];
      const p = get(ctx, evidence, input.environment);
      const acts: ProposedAction[] = [{ kind: 'read', description: 'read package.json, Kubernetes manifests and the branch to deploy' }];
      // Nothing to deploy: only reads are proposed, so nobody is asked to approve a step that does nothing.
      if (!p?.command) return acts;
      const coder = coderBranchOf(ctx.request.previous);
      const where = coder ? ` on coder-ai's branch ${coder.branch} (commit ${coder.commit.slice(0, 12)}) in a temporary worktree` : ' in the workspace';
      acts.push({ kind: kindFor(input.production), description: `deploy to ${input.environment}: run ${p.command.command}${where}`, external: true, ...(input.production ? { production: true } : {}) });
      const health = loopbackUrl(ctx.request.input['healthUrl']);
      if (health.ok) acts.push({ kind: 'http_request', description: `health check after the deploy: GET ${health.url.href} (loopback)`, external: true });
      return acts;
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const kind = 'deployment';
      const ws = ctx.request.workspace;
      const unable = (why: string, data: unknown = null, field?: string): Artifact => ({ kind, summary: `deploy-ai deploy: ${why}`, goalRef, confidence: 0, data, unable: why, tokens: 0, ...(field ? { needsInput: { field } } : {}) });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to deploy');
      const input = parseDeployInput(ctx.request.input);
      if (!input.ok) return unable(input.message, null, input.field);
      const p = get(ctx, evidence, input.environment)!;
      const actionKind = kindFor(input.production);
      if (!p.command) {
        const why = p.missing ?? `no deploy command for ${input.environment}`;
        return { kind, summary: `deploy-ai deploy: not applicable: ${why}`, goalRef, confidence: 1, data: { environment: input.environment, command: null, facts: factLines(p.facts) }, notApplicable: why, tokens: 0 };
      }
      const cmd = p.command;
      if (!ctx.allowed(actionKind)) return unable(`deploying to ${input.environment} (${actionKind}: ${cmd.command}) was not allowed by ACMF; nothing was run`, { environment: input.environment, actionKind, command: { command: cmd.command, source: cmd.source } });

      const coder = coderBranchOf(ctx.request.previous);
      const target = await deployTarget(ws, ctx.request.previous, ctx.signal);
      const timeoutMs = typeof ctx.request.input['timeoutMs'] === 'number' && ctx.request.input['timeoutMs'] > 0 ? ctx.request.input['timeoutMs'] : DEFAULT_DEPLOY_TIMEOUT_MS;
      const userBefore = coder ? await checkoutState(ws) : undefined;
      ctx.progress(40);
      const key = `deploy-ai:deploy:${ctx.request.executionId}:${ctx.request.step}:${input.environment}`;
      const run = await ctx.once<DeployRun>(key, () => execute(ctx, ws, cmd, input.environment, coder, target, timeoutMs), {
        // A crash between the intent and the outcome: whether the deploy ran is unknown, and running a
        // deploy again unasked is worse than saying so.
        reconcile: async () => ({ exitCode: null, signal: null, timedOut: false, spawnError: null, durationMs: 0, outputTail: '', truncated: false, ranIn: coder ? 'worktree' : 'workspace', commit: target?.commit ?? null, workspaceChanged: null, interrupted: true }),
      });
      ctx.progress(75);

      const health: HealthResult = await (async () => {
        const u = loopbackUrl(ctx.request.input['healthUrl']);
        if (!u.ok) return { url: '', checked: false, ok: null, status: null, attempts: 0, note: `not checked: ${u.why}` };
        if (run.exitCode !== 0) return { url: u.url.href, checked: false, ok: null, status: null, attempts: 0, note: 'not checked: the deploy command failed' };
        if (!ctx.allowed('http_request')) return { url: u.url.href, checked: false, ok: null, status: null, attempts: 0, note: `not checked: http_request to ${u.url.href} was not allowed by ACMF` };
        return healthCheck(u.url, ctx.signal);
      })();
      const rollback = await rollbackOf(ws, ctx.request.input, target, run);
      const data: DeployData = { environment: input.environment, production: input.production, actionKind, command: { command: cmd.command, source: cmd.source }, target, run, health, rollback, facts: factLines(p.facts) };
      const text = renderDeploy(data);
      if (run.interrupted) return { ...unable(`an earlier attempt of this deploy (${cmd.command}) was interrupted before its outcome was recorded: whether it ran is unknown; check ${input.environment} and deploy again as a new task`, data), text };
      if (run.spawnError) return { ...unable(`the deploy command (${cmd.command}) could not be started: ${run.spawnError}`, data), text };
      if (run.timedOut) return { ...unable(`the deploy command (${cmd.command}) did not finish within ${timeoutMs} ms and its process tree was killed; output tail:\n${run.outputTail}`, data), text };
      if (run.exitCode !== 0) return { ...unable(`the deploy command (${cmd.command}) failed with exit code ${run.exitCode ?? `signal ${run.signal}`}; output tail:\n${run.outputTail}`, data), text };
      if (health.checked && !health.ok) return { ...unable(`the deploy command succeeded but the health check failed: ${health.note}; roll back with ${rollback.kind} ${rollback.ref}`, data), text };

      const userAfter = coder ? await checkoutState(ws) : undefined;
      const untouched = !userBefore || !userAfter || (userBefore.head === userAfter.head && userBefore.ref === userAfter.ref && userBefore.status === userAfter.status);
      const confidence = Math.round(Math.min(0.95, 0.8 + (health.ok ? 0.1 : 0) + (target?.commit ? 0.05 : 0) - (run.truncated ? 0.05 : 0)) * 100) / 100;
      ctx.progress(100, confidence);
      const summary = [
        `deployed to ${input.environment} with ${cmd.command} (exit 0)`,
        target?.commit ? `${coder ? `coder-ai's branch ${coder.branch} at ` : 'commit '}${target.commit.slice(0, 12)}` : null,
        health.checked ? `health ${health.note}` : `health ${health.note}`,
        run.workspaceChanged?.length ? `the run changed ${run.workspaceChanged.length} workspace file(s)` : null,
        untouched ? null : 'the user\'s checkout changed during the run',
      ].filter(Boolean).join('; ');
      return {
        kind, goalRef, confidence, data, tokens: 0, summary, text,
        actionsTaken: [
          { kind: actionKind, description: `deploy to ${input.environment}: run ${cmd.command}`, external: true, ...(input.production ? { production: true } : {}) },
          ...(health.checked ? [{ kind: 'http_request', description: `health check: GET ${health.url}`, external: true }] : []),
        ],
        rollback: { kind: rollback.kind, ref: rollback.ref },
      };
    },
  };
}

export const deploySkill: Skill = makeDeploySkill();
