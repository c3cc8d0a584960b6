/**
 * The fleet: `agents list|status|mode`, `fleet status|schedule`, and ACMF approvals (`approvals`,
 * `approve`, `deny`).
 */
import type { Command } from 'commander';
import { ACMF_MODES } from '../../../server/src/engine/catalog/enums';
import { usage } from '../cli-error';
import type { Json } from '../http-client';
import { examples, printData, table, withTarget, write } from '../context';

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
  const unavailable = ((r['actions'] as Json[] | undefined) ?? []).filter((a) => a['enabled'] === false);
  if (unavailable.length > 0) lines.push(`  unavailable ${unavailable.map((a) => `${a['name']} (${a['unavailableReason'] ?? 'not enabled'})`).join('; ')}`);
  const history = ((r['acmfHistory'] as Json[] | undefined) ?? []).slice(-5);
  for (const h of history) lines.push(`  ${h['at']}  ${h['from']} → ${h['to']} by ${h['by']}: ${h['reason']}`);
  return `${lines.join('\n')}\n`;
}

function scheduleText(r: Json): string {
  const days = r['days'] as Json[];
  const lines = [`${'agent'.padEnd(16)} ${days.map((d) => String(d['weekday']).slice(0, 3).padEnd(12)).join('')}`.trimEnd()];
  for (const a of r['agents'] as Json[]) {
    const cells = (a['days'] as Json[]).map((d) => {
      const mins = Number(d['warmMinutes']);
      return (a['policy'] === 'always_warm' ? '24h' : a['policy'] === 'on_demand' ? 'on demand' : mins > 0 ? `${(d['windows'] as Json[]).length > 0 ? '07-19 ET' : ''}` : '-').padEnd(12);
    });
    lines.push(`${String(a['agentId']).padEnd(16)} ${cells.join('')}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

export function registerAgentCommands(program: Command): void {
  const agents = program.command('agents').description('the 25 agents: list, status, ACMF mode');
  const list = agents.command('list').description('agents with their domains, state, ACMF mode and load')
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('GET', '/v1/agents/list');
      printData(g, r, () => (r['agents'] as Json[]).map((x) => {
        const acmf = x['acmf'] as Json;
        const load = x['load'] as Json;
        return `${String(x['id']).padEnd(16)} ${(x['domains'] as Json[]).map((d) => d['domain']).join('+').padEnd(14)} ${String(x['state']).padEnd(8)} ${String(acmf['mode']).padEnd(11)} load ${Math.round(Number(load['load']) * 100)}%`;
      }).join('\n'));
    }));
  examples(list, 'cadre agents list', 'cadre agents list --json | jq \'.agents[] | {id, mode: .acmf.mode}\'');
  const status = agents.command('status <id>').description('one agent: ACMF mode, quality, gate strictness, availability, history')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('GET', `/v1/agents/${encodeURIComponent(id)}/status`);
      printData(g, r, () => agentStatusText(r));
    }));
  examples(status, 'cadre agents status review-ai', 'cadre agents status deploy-ai --json');
  const mode = agents.command('mode <id> <mode>')
    .description(`set an agent's ACMF mode (${ACMF_MODES.join(', ')}), recorded in the audit trail with the reason (lowering: any key; raising: an approver key)`)
    .requiredOption('--reason <text>', 'why (recorded in the audit trail)')
    .action(async (id: string, m: string, o: { reason: string }, cmd: Command) => {
      const upper = m.toUpperCase();
      if (!(ACMF_MODES as readonly string[]).includes(upper)) throw usage(`unknown ACMF mode "${m}" (one of ${ACMF_MODES.join(', ')})`);
      if (!o.reason.trim()) throw usage('--reason must say why the mode changes');
      await withTarget(cmd, async (t, g) => {
        const r = await t.api.call<Json>('POST', `/v1/agents/${encodeURIComponent(id)}/acmf`, { mode: upper, reason: o.reason });
        const last = (r['acmfHistory'] as Json[] | undefined)?.at(-1);
        const acmf = r['acmf'] as Json;
        printData(g, r, () => `${r['id']} is ${acmf['mode']}${last && last['to'] === acmf['mode'] ? ` (from ${last['from']}, by ${last['by']}: ${last['reason']})` : ''}`);
      });
    });
  examples(mode, 'cadre agents mode debug-ai OBSERVE --reason "too eager on this repository"');

  const fleet = program.command('fleet').description('the fleet of agents: status, schedule');
  const fstatus = fleet.command('status').description('warm and cold agents, load, breakers, and the executions the agents work on')
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const [list, coord] = await Promise.all([t.api.call<Json>('GET', '/v1/agents/list'), t.api.call<Json>('GET', '/v1/agents/orchestrator/coordination')]);
      const agentsList = list['agents'] as Json[];
      const byState = new Map<string, number>();
      for (const a of agentsList) byState.set(String(a['state']), (byState.get(String(a['state'])) ?? 0) + 1);
      const busy = agentsList.filter((a) => Number((a['load'] as Json)['load']) > 0);
      const data = { agents: agentsList.length, states: Object.fromEntries(byState), busy: busy.map((a) => ({ id: a['id'], load: (a['load'] as Json)['load'] })), coordination: coord };
      printData(g, data, () => {
        const lines = [`${agentsList.length} agents: ${[...byState].map(([s, n]) => `${n} ${s}`).join(', ')}`];
        lines.push(busy.length === 0 ? '  no agent is working' : `  working: ${busy.map((a) => `${a['id']} ${Math.round(Number((a['load'] as Json)['load']) * 100)}%`).join(', ')}`);
        const exs = coord['executions'] as Json[];
        lines.push(exs.length === 0 ? '  no active execution of this key' : `  active executions of this key:`);
        for (const e of exs) lines.push(`    ${e['executionId']} ${e['status']} ${e['progress']}%  ${e['currentAgent'] ?? ''}${e['phase'] ? ` · ${e['phase']}` : ''}`);
        return lines.join('\n');
      });
    }));
  examples(fstatus, 'cadre fleet status', 'cadre fleet status --json');
  const schedule = fleet.command('schedule').description('which agent is warm when, for the coming week (business hours America/New_York)')
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('GET', '/v1/agents/fleet/schedule');
      printData(g, r, () => scheduleText(r));
    }));
  examples(schedule, 'cadre fleet schedule', 'cadre fleet schedule --json');

  const approvals = program.command('approvals').description('pending ACMF approvals (what waits, for which agent, at which risk)')
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('GET', '/v1/approvals');
      const list = r['approvals'] as Json[];
      printData(g, r, () => (list.length === 0 ? 'no pending approvals' : table([['ID', 'AGENT', 'ACTION', 'RISK', 'EXECUTION'], ...list.map((x) => [String(x['id']), String(x['agentId']), String((x['action'] as Json)['kind']), String(x['risk']), String(x['executionId'])])])));
    }));
  examples(approvals, 'cadre approvals', 'cadre approvals --json');
  for (const [verb, approved] of [['approve', true], ['deny', false]] as const) {
    const c = program.command(`${verb} <approvalId>`).description(`${verb} a pending approval (needs an approver key; recorded with who and when)`)
      .option('--by <who>', 'who decides (kept as a note beside the key)', `user:${process.env['USER'] ?? 'cli'}`)
      .option('--reason <text>', 'why')
      .action(async (id: string, o: { by: string; reason?: string }, cmd: Command) => withTarget(cmd, async (t, g) => {
        const r = await t.api.call<Json>('POST', `/v1/approvals/${encodeURIComponent(id)}/decision`, { approved, by: o.by, ...(o.reason ? { reason: o.reason } : {}) });
        printData(g, r, () => `${id} ${r['status']} by ${r['decidedBy']}`);
      }));
    examples(c, `cadre ${verb} appr_0123456789abcdef01234567${approved ? '' : ' --reason "not on a Friday"'}`);
  }
  void write;
}
