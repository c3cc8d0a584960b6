/**
 * CLI commands that talk to a running server's API: tasks and workflows (with `--watch` following
 * the RIGOR progress stream), status, cancel, approvals, agents and the fleet schedule. The key comes
 * from `CADRE_API_KEY`; the server is the owner of the data directory, else 127.0.0.1:7450.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { VERBS } from '../../server/src/engine/catalog/verbs';
import { DEFAULT_PORT } from '../../server/src/host/options';
import { provenOwner, readLock } from '../../server/src/host/owner-lock';
import { CliError } from './cli-error';

type Json = Record<string, unknown>;

/** The contract's task verbs, each a task on the capability that owns it (the engine's table: catalog/verbs.ts). */
export const TASK_VERBS: Record<string, string[]> = Object.fromEntries(VERBS.map((v) => [v.verb, [v.capability]]));

/**
 * Verbs whose agents work on a project folder: without `--source` they take the current directory,
 * as a user who types `cadre review ...` inside a project expects (the others read the instruction,
 * a trace or metrics, and a folder would only widen what they may touch).
 */
export const WORKSPACE_VERBS: ReadonlySet<string> = new Set(['review', 'test', 'security', 'code', 'deploy', 'maintain', 'backup']);

class Api {
  /** `ready` rejects when the data directory's owner did not prove its lock token: the key is not sent. */
  constructor(readonly base: string, private readonly key: string, private readonly ready: Promise<void> = Promise.resolve()) {
    ready.catch(() => {});
  }

  async call(method: string, p: string, body?: unknown): Promise<Json> {
    await this.ready;
    let res: Response;
    try {
      res = await fetch(this.base + p, {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(60_000),
      });
    } catch {
      throw new CliError(`no Cadre server answers at ${this.base} (start one with: cadre serve)`);
    }
    const text = await res.text();
    const json = (text ? JSON.parse(text) : {}) as Json;
    if (!res.ok) {
      const fields = Array.isArray(json['errors']) ? ` (${(json['errors'] as Array<{ field: string; message: string }>).map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
      throw new CliError(`${json['detail'] ?? `HTTP ${res.status}`}${fields}`);
    }
    return json;
  }

  /** Prints the execution's events as they arrive; resolves with the terminal event's status. */
  async watch(executionId: string, out: (line: string) => void): Promise<string> {
    await this.ready;
    let last = 0;
    const state: WatchState = { failedGates: new Map() };
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await fetch(`${this.base}/api/admin/events/stream?execution_id=${encodeURIComponent(executionId)}`, {
        headers: { authorization: `Bearer ${this.key}`, accept: 'text/event-stream', 'last-event-id': String(last) },
      }).catch(() => null);
      if (!res || !res.ok || !res.body) throw new CliError(`cannot follow ${executionId}: ${res ? `HTTP ${res.status}` : 'no server'}`);
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!id || !data) continue;
          last = Number(id);
          const e = JSON.parse(data) as Json;
          out(describe(e, state));
          if (e['type'] === 'execution_completed' || e['type'] === 'execution_failed') return String(e['status']);
        }
      }
      // The stream ended early (server restarted): resume from the last event seen.
    }
    throw new CliError(`lost the progress stream of ${executionId}`);
  }
}

interface WatchState {
  /** The failed gates (with their reasons) of each agent's last Review, for its `✘ failed` line. */
  failedGates: Map<string, string[]>;
  /** Steps seen per outcome, for the final line's reason. */
  outcomes?: Map<string, number>;
}

/** One step's end, by outcome (protocol/events.ts STEP_OUTCOMES): the reason is always shown when there is one. */
export function describeStep(e: Json, state: WatchState): string {
  const agent = String(e['agent_id']);
  const reason = typeof e['reason'] === 'string' && e['reason'] ? e['reason'] : null;
  const outcome = typeof e['outcome'] === 'string' ? e['outcome'] : e['passed'] ? 'completed' : 'failed';
  state.outcomes ??= new Map();
  state.outcomes.set(outcome, (state.outcomes.get(outcome) ?? 0) + 1);
  switch (outcome) {
    case 'completed': return `✔ ${agent} completed (confidence ${Number(e['confidence']).toFixed(2)}, ${e['duration_ms']} ms)`;
    case 'not_applicable': return `– ${agent} not applicable: ${reason ?? 'nothing to do'}`;
    case 'needs_input': return `? ${agent} needs input: ${reason ?? 'the request lacks what this step needs'}`;
    case 'failed': {
      const gates = state.failedGates.get(agent) ?? [];
      return `✘ ${agent} failed: ${gates.length > 0 ? gates.join('; ') : reason ?? 'a quality gate failed'}`;
    }
    default: return `! ${agent} error: ${reason ?? 'unknown error'}`;
  }
}

const ACMF_MODE_NAMES = ['OBSERVE', 'LEARNING', 'ASSISTED', 'AUTONOMOUS'];

/** `cadre agents status`: the few lines a person needs to judge an agent's autonomy. */
export function agentStatusText(r: Json): string {
  const acmf = r['acmf'] as Json;
  const strict = r['strictness'] as Json | undefined;
  const quality = acmf['qualityScore'];
  const lines = [
    `${r['id']}  ${r['displayName'] ?? ''}`.trimEnd(),
    `  mode        ${acmf['mode']}${acmf['pendingPromotion'] ? ` (promotion to ${(acmf['pendingPromotion'] as Json)['to']} pending: ${(acmf['pendingPromotion'] as Json)['reason']})` : ''}`,
    `  quality     ${typeof quality === 'number' ? quality.toFixed(2) : 'no reviews yet'}`,
    `  thresholds  ${!strict ? 'unknown' : Number(strict['recentFailures']) === 0 ? 'as configured' : `stricter by ${Math.min(Number(strict['recentFailures']), Number(strict['maxSteps']))} step(s) (${strict['recentFailures']} failed review(s) since the last pass; at most ${strict['maxSteps']})`}`,
    `  health      ${r['health']}  state ${r['state']}`,
  ];
  const unavailable = (r['actions'] as Json[] | undefined ?? []).filter((a) => a['enabled'] === false);
  if (unavailable.length > 0) lines.push(`  unavailable ${unavailable.map((a) => `${a['name']} (${a['unavailableReason'] ?? 'not enabled'})`).join('; ')}`);
  const history = (r['acmfHistory'] as Json[] | undefined ?? []).slice(-5);
  for (const h of history) lines.push(`  ${h['at']}  ${h['from']} → ${h['to']} by ${h['by']}: ${h['reason']}`);
  return `${lines.join('\n')}\n`;
}

function describe(e: Json, state: WatchState = { failedGates: new Map() }): string {
  switch (e['type']) {
    case 'execution_started': return `started: ${(e['agents'] as string[]).join(' → ')}`;
    case 'step_started': return `▶ ${e['agent_id']} ${e['action']}`;
    case 'phase_started': return `  ${e['agent_id']} · ${e['phase']}`;
    case 'work_progress': return `  ${e['agent_id']} · ${e['phase']} ${e['progress']}% · ${Number(e['confidence']).toFixed(2)}`;
    case 'phase_completed': return `  ${e['agent_id']} · ${e['phase']} done in ${e['duration_ms']} ms`;
    case 'gate_results': {
      const fails = (e['gates'] as Array<{ gate: string; status: string; reason?: string }>).filter((g) => g.status === 'fail');
      state.failedGates.set(String(e['agent_id']), fails.map((g) => (g.reason ? `${g.gate} (${g.reason})` : g.gate)));
      const failed = fails.map((g) => g.gate);
      return `  ${e['agent_id']} · Review: ${failed.length === 0 ? 'all 21 gates pass' : `failed ${failed.join(', ')}`}`;
    }
    case 'approval_requested': return `  ⏸ ${e['agent_id']} waits for approval ${e['approval_id']} (${e['action']}, risk ${e['risk']}): cadre approve ${e['approval_id']}`;
    case 'approval_decided': return `  ${e['approved'] ? '✔ approved' : '✘ denied'} by ${e['by']}`;
    case 'step_completed': return describeStep(e, state);
    case 'execution_completed': {
      const counts = [...(state.outcomes ?? new Map<string, number>())].map(([k, n]) => `${n} ${k.replace('_', ' ')}`);
      return counts.length > 0 ? `completed: ${counts.join(', ')}` : 'completed';
    }
    case 'execution_failed': return `${e['status']}: ${(e['error'] as Json)['message']}`;
    default: return String(e['type']);
  }
}

/** A repository URL as given; a folder as an absolute path (the server resolves nothing against the CLI's directory). */
function sourceOf(given: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : path.resolve(given);
}

export function registerEngineCommands(program: Command, dataDirOf: (opt?: string) => string): void {
  const api = (o: { url?: string; dataDir?: string }): Api => {
    const key = process.env['CADRE_API_KEY']?.trim();
    if (!key) throw new CliError('set CADRE_API_KEY to an API key (cadre keys create makes one)');
    if (o.url) return new Api(o.url.replace(/\/+$/, ''), key);
    const dataDir = dataDirOf(o.dataDir);
    const lock = readLock(path.join(dataDir, 'cadre.lock'));
    if (!lock) return new Api(`http://127.0.0.1:${DEFAULT_PORT}`, key);
    // The key goes only to the process that proves the lock's token (server/src/host/owner-lock.ts).
    const proven = provenOwner(dataDir).then((owner) => {
      if (!owner) throw new CliError(`the process named by ${path.join(dataDir, 'cadre.lock')} (pid ${lock.pid}) did not prove it owns the data directory; CADRE_API_KEY was not sent (is the server running? --url names one explicitly)`);
    });
    return new Api(`http://127.0.0.1:${lock.port ?? DEFAULT_PORT}`, key, proven);
  };
  const print = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
  const common = (c: Command) => c.option('-u, --url <url>', 'server URL').option('-d, --data-dir <dir>', 'data directory');
  const finish = async (a: Api, id: string, watch: boolean) => {
    if (!watch) return;
    const status = await a.watch(id, (l) => process.stdout.write(`${l}\n`));
    if (status !== 'completed') process.exitCode = 1;
  };

  for (const [verb, caps] of Object.entries(TASK_VERBS)) {
    const onWorkspace = WORKSPACE_VERBS.has(verb);
    common(program.command(`${verb} <instruction...>`))
      .description(`submit a ${caps.join('/')} task: ${verb}`)
      .option('-w, --watch', 'follow the RIGOR progress until the task ends')
      .option('-s, --scope <scope>', 'demo, poc, mvp, product or production')
      .option('--source <path>', `project folder or repository URL${onWorkspace ? ' (default: the current directory)' : ''}`)
      .action(async (words: string[], o: { watch?: boolean; scope?: string; source?: string; url?: string; dataDir?: string }) => {
        const a = api(o);
        const source = o.source !== undefined ? sourceOf(o.source) : onWorkspace ? process.cwd() : undefined;
        const r = await a.call('POST', '/v1/agents/tasks', { task: words.join(' '), verb, capabilities: caps, ...(o.scope ? { scope: o.scope } : {}), ...(source ? { source } : {}) });
        process.stdout.write(`${r['taskId']} ${r['status']}${source ? ` on ${source}` : ''}; agents: ${(r['agentsAssigned'] as string[]).join(', ')}\n`);
        await finish(a, r['taskId'] as string, o.watch === true);
      });
  }

  const wf = program.command('workflow').description('run and follow workflows');
  common(wf.command('run <workflow> <prompt...>'))
    .description('invoke a domain workflow or cross-capability template, e.g. full-sdlc')
    .option('-c, --capability <cap>', 'capability the workflow belongs to', 'BUILD')
    .option('-w, --watch', 'follow the RIGOR progress until the workflow ends')
    .action(async (name: string, words: string[], o: { capability: string; watch?: boolean; url?: string; dataDir?: string }) => {
      const a = api(o);
      const r = await a.call('POST', '/api/workflows/invoke', { capability: o.capability, workflow: name, input: { prompt: words.join(' ') } });
      process.stdout.write(`${r['workflowId']} accepted\n`);
      await finish(a, r['workflowId'] as string, o.watch === true);
    });
  common(wf.command('list')).description('recent workflow executions').action(async (o) => print(await api(o).call('GET', '/api/workflows')));

  common(program.command('status <id>')).description('status of a task, workflow or RIGOR execution').action(async (id: string, o) => {
    const a = api(o);
    const p = id.startsWith('task_') ? `/v1/agents/tasks/${id}` : id.startsWith('wf_') ? `/api/workflows/${id}/status` : `/api/v1/rigor/status/${id}`;
    print(await a.call('GET', p));
  });
  common(program.command('watch <id>')).description('follow an execution\'s progress stream').action(async (id: string, o) => finish(api(o), id, true));
  common(program.command('cancel <id>')).description('cancel a running execution').action(async (id: string, o) => {
    const r = await api(o).call('POST', `/api/workflows/cancel/${id}`);
    process.stdout.write(`${id} ${r['status']}\n`);
  });
  common(program.command('invoke <agent> <prompt...>')).description('run one agent through RIGOR')
    .option('-m, --acmf-mode <mode>', 'cap the agent\'s ACMF mode for this run')
    .option('-w, --watch', 'follow the RIGOR progress')
    .option('--source <path>', 'project folder or repository URL (default: the server\'s workspace)')
    .action(async (agent: string, words: string[], o: { acmfMode?: string; watch?: boolean; source?: string; url?: string; dataDir?: string }) => {
      const a = api(o);
      const source = o.source === undefined ? undefined : sourceOf(o.source);
      const r = await a.call('POST', `/api/v1/rigor/invoke/${agent}`, { prompt: words.join(' '), ...(o.acmfMode ? { acmfMode: o.acmfMode } : {}), ...(source ? { source } : {}) });
      process.stdout.write(`${r['executionId']} accepted\n`);
      await finish(a, r['executionId'] as string, o.watch === true);
    });

  common(program.command('approvals')).description('pending ACMF approvals').action(async (o) => {
    const r = await api(o).call('GET', '/v1/approvals');
    const list = r['approvals'] as Array<Json>;
    if (list.length === 0) process.stdout.write('no pending approvals\n');
    for (const x of list) process.stdout.write(`${x['id']}  ${x['agentId']}  ${(x['action'] as Json)['kind']}  risk ${x['risk']}  ${x['executionId']}\n`);
  });
  for (const [verb, approved] of [['approve', true], ['deny', false]] as const) {
    common(program.command(`${verb} <approvalId>`)).description(`${verb} a pending approval (recorded with who and when)`)
      .option('--by <who>', 'who decides', `user:${process.env['USER'] ?? 'cli'}`)
      .option('--reason <text>', 'why')
      .action(async (id: string, o: { by: string; reason?: string; url?: string; dataDir?: string }) => {
        const r = await api(o).call('POST', `/v1/approvals/${id}/decision`, { approved, by: o.by, ...(o.reason ? { reason: o.reason } : {}) });
        process.stdout.write(`${id} ${r['status']} by ${r['decidedBy']}\n`);
      });
  }

  const agents = program.command('agents').description('the 25 agents');
  common(agents.command('list')).description('agents by domain with state, ACMF mode and load').action(async (o) => {
    const r = await api(o).call('GET', '/v1/agents/list');
    for (const x of r['agents'] as Array<Json>) {
      const acmf = x['acmf'] as Json;
      const load = x['load'] as Json;
      process.stdout.write(`${String(x['id']).padEnd(16)} ${(x['domains'] as Array<Json>).map((d) => d['domain']).join('+').padEnd(14)} ${String(x['state']).padEnd(8)} ${String(acmf['mode']).padEnd(11)} load ${Math.round(Number(load['load']) * 100)}%\n`);
    }
  });
  common(agents.command('status <id>')).description('one agent: ACMF mode, quality, gate strictness, history and recent steps')
    .option('--json', 'print the whole status as JSON')
    .action(async (id: string, o: { json?: boolean; url?: string; dataDir?: string }) => {
      const r = await api(o).call('GET', `/v1/agents/${encodeURIComponent(id)}/status`);
      if (o.json) return print(r);
      process.stdout.write(agentStatusText(r));
    });
  common(agents.command('mode <id> <mode>')).description('set an agent\'s ACMF mode (OBSERVE, LEARNING, ASSISTED, AUTONOMOUS), audited with the reason')
    .requiredOption('--reason <text>', 'why (recorded in the audit trail)')
    .action(async (id: string, mode: string, o: { reason: string; url?: string; dataDir?: string }) => {
      const m = mode.toUpperCase();
      if (!ACMF_MODE_NAMES.includes(m)) throw new CliError(`unknown ACMF mode "${mode}" (one of ${ACMF_MODE_NAMES.join(', ')})`);
      if (!o.reason.trim()) throw new CliError('--reason must say why the mode changes');
      const r = await api(o).call('POST', `/v1/agents/${encodeURIComponent(id)}/acmf`, { mode: m, reason: o.reason });
      const last = (r['acmfHistory'] as Json[] | undefined)?.at(-1);
      const acmf = r['acmf'] as Json;
      process.stdout.write(`${r['id']} is ${acmf['mode']}${last && last['to'] === acmf['mode'] ? ` (from ${last['from']}, by ${last['by']}: ${last['reason']})` : ''}\n`);
    });

  const fleet = program.command('fleet').description('the fleet of agents');
  common(fleet.command('schedule')).description('which agent is warm when, for the coming week (America/New_York)').action(async (o) => {
    const r = await api(o).call('GET', '/v1/agents/fleet/schedule');
    const days = r['days'] as Array<Json>;
    process.stdout.write(`${'agent'.padEnd(16)} ${days.map((d) => String(d['weekday']).slice(0, 3).padEnd(12)).join('')}\n`);
    for (const a of r['agents'] as Array<Json>) {
      const cells = (a['days'] as Array<Json>).map((d) => {
        const mins = Number(d['warmMinutes']);
        return (a['policy'] === 'always_warm' ? '24h' : a['policy'] === 'on_demand' ? 'on demand' : mins > 0 ? `${(d['windows'] as Array<Json>).length > 0 ? '07-19 ET' : ''}` : '-').padEnd(12);
      });
      process.stdout.write(`${String(a['agentId']).padEnd(16)} ${cells.join('')}\n`);
    }
  });
}
