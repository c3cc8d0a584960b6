/**
 * The soak's task mix, shared by test/integration/core-loop/soak.test.ts and bench/soak.ts: review,
 * test, debug, security and OPERATE verbs on the fixture projects, `code` with no model (refused at the door,
 * counted), and a RIGOR invocation of each BUILD and SECURE agent (coder-ai's refused too), run with
 * bounded concurrency over HTTP. `routing: 'capabilities'` sends the same work the way clients did
 * before the verb table (capabilities only, no verb: the whole domain workflow runs), the baseline
 * of the bench.
 */
import type { Json } from '../../support/fleet-server';
import { TERMINAL, type PooledClient } from './client';
import type { Projects } from './projects';

export type Routing = 'verbs' | 'capabilities';

export interface MixItem {
  kind: string;
  /** A verb run on a healthy fixture: it must complete (issue 10: no failed flagship run passes as success). */
  flagship: boolean;
  path: string;
  body: Json;
}

export interface StepView { agentId: string; action: string; outcome: string | null; reason: string | null; passed: boolean | null }

export interface TaskResult {
  kind: string;
  flagship: boolean;
  /** HTTP status of the submission. */
  submitted: number;
  id: string | null;
  status: string | null;
  /** The execution waited on a person (an approval) at least once. */
  askedPerson: boolean;
  steps: StepView[];
  detail: string;
}

const BUILD_SECURE_AGENTS = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai', 'security-ai', 'threathunter-ai'];

/** One round of the mix; `mixItem(i)` cycles through it. */
export function mixRound(p: Projects, routing: Routing): MixItem[] {
  const task = (kind: string, capability: string, verb: string, text: string, source: string, flagship: boolean): MixItem => ({
    kind, flagship, path: '/v1/agents/tasks',
    body: routing === 'verbs' ? { capabilities: [capability], task: `${verb}: ${text}`, source } : { capabilities: [capability], task: text, source },
  });
  const prompts: Record<string, string> = {
    'req-ai': 'Users can export their notes as Markdown so that they can keep a copy. Admins can list users so that they can audit accounts.',
    'planner-ai': 'Plan the release:\n- add a slugify option for separators\n- document parseDuration\n- publish 1.3.0',
    'debug-ai': p.trace,
  };
  const invokes: MixItem[] = BUILD_SECURE_AGENTS.map((agent) => ({
    kind: `invoke ${agent}`, flagship: false, path: `/api/v1/rigor/invoke/${agent}`,
    body: { prompt: prompts[agent] ?? 'check this project', source: agent === 'threathunter-ai' ? p.noLogs : agent === 'security-ai' ? p.webApp : p.tsLibrary },
  }));
  return [
    task('review', 'BUILD', 'review', 'src/index.ts for bugs', p.tsLibrary, true),
    task('test', 'BUILD', 'test', 'run the test suite', p.tsLibrary, true),
    task('security', 'SECURE', 'security', 'check this repository', p.noLogs, true),
    task('debug', 'BUILD', 'debug', p.trace, p.tsLibrary, false),
    task('review', 'BUILD', 'review', 'src/app.js', p.webApp, true),
    ...invokes.slice(0, 5),
    task('test', 'BUILD', 'test', 'run the tests', p.webApp, true),
    task('security', 'SECURE', 'security', 'scan the app', p.webApp, true),
    // The OPERATE verbs (issue 12's agents): each completes on these projects (with its findings, or not
    // applicable with its reason), except an incident with no signal at all, which needs input.
    task('deploy', 'OPERATE', 'deploy', 'the users api', p.webApp, true),
    task('monitor', 'OPERATE', 'monitor', 'the users api', p.webApp, true),
    task('maintain', 'OPERATE', 'maintain', 'the library', p.tsLibrary, true),
    task('capacity', 'OPERATE', 'capacity', 'the users api', p.webApp, true),
    task('backup', 'OPERATE', 'backup', 'the service', p.noLogs, true),
    task('incident', 'OPERATE', 'incident', 'users see errors', p.noLogs, false),
    task('code', 'BUILD', 'code', 'add a subtract function to src/index.ts', p.tsLibrary, false),
    ...invokes.slice(5),
  ];
}

export interface MixOptions {
  tasks: number;
  concurrency: number;
  routing: Routing;
  /** Deny approvals the run asks for (the bench's baseline would otherwise wait an hour); else leave them and stop waiting. */
  denyApprovals?: boolean;
  timeoutMs?: number;
}

export interface MixReport {
  results: TaskResult[];
  elapsedMs: number;
  completed: number;
  refused: number;
  askedPerson: number;
  /** Ended failed (or cancelled) after being accepted. */
  failed: number;
  /** Accepted and neither ended nor waiting on an approval when the wait gave up: left hanging. */
  hanging: number;
}

async function runOne(a: PooledClient, item: MixItem, opts: MixOptions): Promise<TaskResult> {
  const r = await a.post(item.path, item.body);
  const base: TaskResult = { kind: item.kind, flagship: item.flagship, submitted: r.status, id: null, status: null, askedPerson: false, steps: [], detail: '' };
  if (r.status !== 202) return { ...base, detail: `${r.status} ${String(r.body?.['code'] ?? '')}: ${String(r.body?.['detail'] ?? '')}` };
  const id = (r.body['taskId'] ?? r.body['executionId']) as string;
  const url = r.body['statusUrl'] as string;
  let askedPerson = false;
  const end = Date.now() + (opts.timeoutMs ?? 90_000);
  for (;;) {
    const s = await a.get(url);
    const status = s.body['status'] as string;
    if (TERMINAL.includes(status)) {
      const out = s.body['output'] as { steps?: StepView[] } | null;
      // A task reports its steps in output.steps; a RIGOR execution is one step, reported at the top.
      const steps = out?.steps ?? (s.body['agentId'] ? [{ agentId: s.body['agentId'] as string, action: s.body['action'] as string, outcome: (s.body['outcome'] as string) ?? null, reason: (s.body['reason'] as string) ?? null, passed: (s.body['passed'] as boolean) ?? null }] : []);
      const err = s.body['error'] as { message?: string } | null;
      return { ...base, id, status, askedPerson, steps, detail: err?.message ?? '' };
    }
    if (status === 'awaiting_approval') {
      askedPerson = true;
      const pend = await a.get(`/v1/approvals?execution_id=${id}`);
      const approvals = (pend.body['approvals'] as Array<{ id: string }>) ?? [];
      if (!opts.denyApprovals) return { ...base, id, status, askedPerson, steps: [], detail: `waiting on ${approvals.length} approval(s)` };
      for (const ap of approvals) await a.post(`/v1/approvals/${ap.id}/decision`, { approved: false, reason: 'soak: no person available' });
    }
    if (Date.now() > end) return { ...base, id, status, askedPerson, detail: `still ${status} after ${opts.timeoutMs ?? 90_000} ms` };
    await new Promise((res) => setTimeout(res, 300));
  }
}

/** Runs `opts.tasks` items of the mix, at most `opts.concurrency` at a time. */
export async function runMix(a: PooledClient, p: Projects, opts: MixOptions): Promise<MixReport> {
  const round = mixRound(p, opts.routing);
  const results: TaskResult[] = new Array(opts.tasks);
  let next = 0;
  const t0 = Date.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= opts.tasks) return;
      results[i] = await runOne(a, round[i % round.length]!, opts);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  const elapsedMs = Date.now() - t0;
  return {
    results, elapsedMs,
    completed: results.filter((r) => r.status === 'completed').length,
    refused: results.filter((r) => r.submitted !== 202).length,
    askedPerson: results.filter((r) => r.askedPerson).length,
    failed: results.filter((r) => r.status === 'failed' || r.status === 'cancelled').length,
    hanging: results.filter((r) => r.submitted === 202 && !TERMINAL.includes(r.status ?? '') && r.status !== 'awaiting_approval').length,
  };
}
