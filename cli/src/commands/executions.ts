/**
 * Reading executions and the RIGOR framework: `status [id]`, `rigor invoke|status|health`,
 * `workflow list|run|status|cancel|runs`.
 */
import { type Command, Option } from 'commander';
import { ACMF_MODES, PRIORITIES, SCOPES, INTELLIGENCE_TIERS } from '../../../server/src/engine/catalog/enums';
import { findAgent } from '../../../server/src/engine/catalog/index';
import { DOMAIN_WORKFLOWS, WORKFLOW_TEMPLATES, pipelineAgents } from '../../../server/src/engine/catalog/workflows';
import { PHASES } from '../../../protocol/events';
import { usage } from '../cli-error';
import type { GlobalOptions, Target } from '../connection';
import { EXIT } from '../exit-codes';
import type { Json } from '../http-client';
import { afterSubmit, examples, globals, printData, printJson, sourceOf, table, withTarget, write } from '../context';
import { reportLines } from '../report';
import { invokeWorkflow } from './tasks';

type Phases = Array<{ phase: string; status: string }>;

function phaseMarks(phases: Phases | undefined): string {
  if (!phases || phases.length === 0) return PHASES.map((p) => `${p} Pending`).join(', ');
  return phases.map((p) => `${p.phase} ${p.status}`).join(', ');
}

/** The exit code of a status: 0 unless it ended badly (1) or waits for a person (5). */
function statusExit(status: string): number {
  return status === 'failed' || status === 'cancelled' ? EXIT.FAILED : status === 'awaiting_approval' ? EXIT.AWAITING_APPROVAL : EXIT.OK;
}

function errorLine(err: unknown): string[] {
  if (!err || typeof err !== 'object') return [];
  const e = err as Json;
  return [`  error ${e['code']}: ${e['message']}`];
}

/** A task or workflow status (GET /api/workflows/{id}/status) in lines: one per step. */
export function workflowStatusText(r: Json): string {
  const steps = (r['phases'] as Json[] | undefined) ?? [];
  const lines = [`${r['workflowId']} ${r['status']} ${r['progress']}%${r['workflow'] ? ` (${r['workflow']})` : ''}`];
  for (const s of steps) {
    const conf = typeof s['confidence'] === 'number' ? ` · confidence ${(s['confidence'] as number).toFixed(2)}` : '';
    const failed = ((s['gates'] as Json | undefined)?.['failedGates'] as string[] | undefined) ?? [];
    lines.push(`  ${String(s['step']).padStart(2)}. ${s['agentId']} ${s['action']}: ${s['outcome'] ?? s['status']}${conf}  [${phaseMarks(s['phases'] as Phases)}]`);
    if (s['reason']) lines.push(`      reason: ${s['reason']}`);
    if (failed.length > 0) lines.push(`      failed gates: ${failed.join(', ')}`);
  }
  lines.push(...errorLine(r['error']));
  const report = reportLines(r['output']);
  if (report.length > 0) lines.push('result:', ...report);
  return `${lines.join('\n')}\n`;
}

/** A RIGOR execution's status with its gate table. */
export function rigorStatusText(r: Json): string {
  const lines = [
    `${r['executionId']} ${r['status']}: ${r['agentId']} ${r['action']}${r['outcome'] ? ` (${r['outcome']})` : ''}`,
    `  phases      ${phaseMarks(r['phases'] as Phases)}`,
    `  acmf        ${r['acmfMode'] ?? '-'}${r['acmfModeCap'] ? ` (capped at ${r['acmfModeCap']})` : ''}`,
    `  confidence  ${typeof r['confidence'] === 'number' ? (r['confidence'] as number).toFixed(2) : '-'}`,
  ];
  if (r['reason']) lines.push(`  reason      ${r['reason']}`);
  const gates = (r['gates'] as Json[] | undefined) ?? [];
  const fails = gates.filter((g) => g['status'] === 'fail');
  if (gates.length > 0) lines.push(`  gates       ${gates.filter((g) => g['status'] === 'pass').length} pass, ${fails.length} fail, ${gates.filter((g) => g['status'] === 'not_applicable').length} not applicable`);
  for (const g of fails) lines.push(`    ✘ ${g['gate']}: ${g['reason']}`);
  lines.push(...errorLine(r['error']));
  const report = reportLines(r['output']);
  if (report.length > 0) lines.push('result:', ...report);
  return `${lines.join('\n')}\n`;
}

async function executionStatus(t: Target, g: GlobalOptions, id: string): Promise<void> {
  const rigor = !id.startsWith('task_') && !id.startsWith('wf_');
  const r = await t.api.call<Json>('GET', rigor ? `/api/v1/rigor/status/${encodeURIComponent(id)}` : `/api/workflows/${encodeURIComponent(id)}/status`);
  // A task's contract shape (taskId, completedPhases...) for --json; the step table is the workflow view.
  const data = id.startsWith('task_') && g.json ? await t.api.call<Json>('GET', `/v1/agents/tasks/${encodeURIComponent(id)}`) : r;
  printData(g, data, () => (rigor ? rigorStatusText(r) : workflowStatusText(r)));
  process.exitCode = statusExit(String(r['status']));
}

/** `cadre status` without an id: the server, the running work, the approvals waiting, the agents' modes. */
async function overview(t: Target, g: GlobalOptions): Promise<void> {
  const [health, rigor, approvals, agents] = await Promise.all([
    t.api.call<Json>('GET', '/v1/health', undefined, { auth: false }),
    t.api.call<Json>('GET', '/v1/admin/rigor/health', undefined, { okStatuses: [503] }).catch(() => null),
    t.api.call<Json>('GET', '/v1/approvals'),
    t.api.call<Json>('GET', '/v1/agents/list'),
  ]);
  const list = agents['agents'] as Json[];
  const modes = new Map<string, number>();
  for (const a of list) modes.set(String((a['acmf'] as Json)['mode']), (modes.get(String((a['acmf'] as Json)['mode'])) ?? 0) + 1);
  const ex = (rigor?.['executions'] as Json | undefined) ?? {};
  const pending = approvals['approvals'] as Json[];
  const data = { server: t.api.base, embedded: t.embedded !== null, health, rigor, approvals: pending.length, agents: { total: list.length, modes: Object.fromEntries(modes) } };
  printData(g, data, () => [
    `${t.api.base}${t.embedded ? ' (embedded)' : ''}: ${health['status']} (Cadre ${health['version']}, pid ${health['pid']}, up ${health['uptime_s']} s)`,
    `  executions  ${ex['running'] ?? '?'} running, ${ex['awaitingApproval'] ?? '?'} waiting for approval`,
    `  approvals   ${pending.length} pending${pending.length > 0 ? `: ${pending.slice(0, 3).map((a) => `cadre approve ${a['id']}`).join(' · ')}` : ''}`,
    `  audit       ${rigor ? `${(rigor['audit'] as Json)['records']} records, ${(rigor['audit'] as Json)['intact'] ? 'intact' : 'BROKEN'}` : 'unknown'}`,
    `  agents      ${list.length}: ${[...modes].map(([m, n]) => `${n} ${m}`).join(', ')}`,
  ].join('\n'));
}

export function registerExecutionCommands(program: Command): void {
  const status = program.command('status [id]')
    .description('without an id: the server, running work, pending approvals and agent modes; with one: a task, workflow or RIGOR execution step by step (exit 1 failed, 5 waiting for approval)')
    .action(async (id: string | undefined, _o: unknown, cmd: Command) => withTarget(cmd, (t, g) => (id ? executionStatus(t, g, id) : overview(t, g))));
  examples(status, 'cadre status', 'cadre status task_0123456789abcdef01234567', 'cadre status exec_0123456789abcdef01234567 --json');

  const rigor = program.command('rigor').description('the RIGOR framework: run one agent through its five phases, an execution\'s gate table, the framework\'s health');
  const rinvoke = rigor.command('invoke <agent> <prompt...>')
    .description('run one agent through Research, Inspect, Generate, Optimize and Review (21 gates) under ACMF')
    .addOption(new Option('-m, --acmf-mode <mode>', 'cap the agent\'s ACMF mode for this run (never raises it)').choices([...ACMF_MODES]).argParser((v: string) => v.toUpperCase()))
    .addOption(new Option('--priority <priority>', 'priority').choices([...PRIORITIES]))
    .addOption(new Option('-s, --scope <scope>', 'RIGOR quality level').choices([...SCOPES]))
    .addOption(new Option('-i, --intelligence <tier>', 'intelligence tier').choices([...INTELLIGENCE_TIERS]))
    .option('--source <path>', 'project folder or repository URL (default: the server\'s workspace)')
    .option('-w, --watch', 'follow the RIGOR progress until it ends')
    .option('--wait', 'with --watch: keep following through approvals')
    .action(async (agentId: string, words: string[], o: { acmfMode?: string; priority?: string; scope?: string; intelligence?: string; source?: string; watch?: boolean; wait?: boolean }, cmd: Command) => {
      if (!findAgent(agentId)) throw usage(`unknown agent "${agentId}" (cadre agents list names the 25)`);
      if (o.acmfMode && !(ACMF_MODES as readonly string[]).includes(o.acmfMode)) throw usage(`unknown ACMF mode "${o.acmfMode}" (one of ${ACMF_MODES.join(', ')})`);
      await withTarget(cmd, async (t, g) => {
        const source = o.source !== undefined ? sourceOf(o.source) : undefined;
        const r = await t.api.call<Json>('POST', `/api/v1/rigor/invoke/${encodeURIComponent(agentId)}`, {
          prompt: words.join(' '), ...(o.acmfMode ? { acmfMode: o.acmfMode } : {}), ...(o.priority ? { priority: o.priority } : {}),
          ...(o.scope ? { scope: o.scope } : {}), ...(o.intelligence ? { intelligence: o.intelligence } : {}), ...(source ? { source } : {}),
        });
        if (g.json && !o.watch) printJson(r);
        else if (!g.json) write(`${r['executionId']} accepted\n`);
        await afterSubmit(t, g, r['executionId'] as string, { watch: o.watch === true, wait: o.wait === true });
      });
    });
  examples(rinvoke, 'cadre rigor invoke security-ai "scan for secrets" --acmf-mode OBSERVE --watch', 'cadre rigor invoke review-ai "review the diff" --source . --json');
  const rstatus = rigor.command('status <executionId>').description('a RIGOR execution: phases, ACMF mode, confidence and its 21 gates (failed ones with their reason)')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('GET', `/api/v1/rigor/status/${encodeURIComponent(id)}`);
      printData(g, r, () => rigorStatusText(r));
      process.exitCode = statusExit(String(r['status']));
    }));
  examples(rstatus, 'cadre rigor status exec_0123456789abcdef01234567');
  const rhealth = rigor.command('health').description('health of the RIGOR framework: phases, gates, the audit chain, running executions (exit 1 when degraded)')
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      // 503 is the degraded report itself (a broken audit chain), not a failed call.
      const r = await t.api.call<Json>('GET', '/v1/admin/rigor/health', undefined, { okStatuses: [503] });
      const audit = r['audit'] as Json;
      const ex = r['executions'] as Json;
      printData(g, r, () => `RIGOR ${r['status']}: ${(r['phases'] as string[]).join(' → ')}; ${r['gates']} gates; audit chain ${audit['intact'] ? 'intact' : 'BROKEN'} (${audit['records']} records); ${ex['running']} running, ${ex['awaitingApproval']} waiting for approval`);
      if (r['status'] !== 'ok') process.exitCode = EXIT.FAILED;
    }));
  examples(rhealth, 'cadre rigor health', 'cadre rigor health --json');

  const wf = program.command('workflow').description('the six domain workflows and nine cross-capability templates: list, run, status, cancel, runs');
  const list = wf.command('list').description('every workflow with its capabilities, pattern and agents in order (from the catalog; no server needed)')
    .action((_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const all = [...DOMAIN_WORKFLOWS, ...WORKFLOW_TEMPLATES].map((w) => ({ id: w.id, kind: w.kind, name: w.displayName, capabilities: [...w.capabilities], pattern: w.pattern, agents: pipelineAgents(w), aliases: [...w.aliases], description: w.description }));
      printData(g, { workflows: all }, () => {
        const rows = [['WORKFLOW', 'KIND', 'CAPABILITIES', 'PATTERN', 'AGENTS']];
        for (const w of all) rows.push([w.id, w.kind, w.capabilities.join('+'), w.pattern, w.agents.join(' → ')]);
        return table(rows);
      });
    });
  examples(list, 'cadre workflow list', 'cadre workflow list --json | jq -r \'.workflows[].id\'');
  const names = [...DOMAIN_WORKFLOWS, ...WORKFLOW_TEMPLATES].map((w) => `  ${w.id.padEnd(30)} ${pipelineAgents(w).join(' → ')}`).join('\n');
  const run = wf.command('run <workflow> <prompt...>')
    .description('invoke a domain workflow or a cross-capability template (its capability is taken from the catalog)')
    .option('-c, --capability <cap>', 'capability the workflow is invoked under (default: the workflow\'s first)')
    .option('--source <path>', 'project folder or repository URL (default: the server\'s workspace)')
    .option('-w, --watch', 'follow the RIGOR progress until the workflow ends')
    .option('--wait', 'with --watch: keep following through approvals')
    .addOption(new Option('-s, --scope <scope>', 'RIGOR quality level').choices([...SCOPES]))
    .addOption(new Option('-i, --intelligence <tier>', 'intelligence tier').choices([...INTELLIGENCE_TIERS]))
    .addHelpText('after', `\nWorkflows:\n${names}\n`)
    .action(async (name: string, words: string[], o: { capability?: string; source?: string; watch?: boolean; wait?: boolean; scope?: string; intelligence?: string }, cmd: Command) =>
      withTarget(cmd, (t, g) => invokeWorkflow(t, g, name, words.join(' '), o)));
  examples(run, 'cadre workflow run full-sdlc "ship the login page" --watch', 'cadre workflow run secure "scan the repo" --source . --json');
  const wstatus = wf.command('status <workflowId>').description('a workflow\'s steps with their RIGOR phases, outcome and reason')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('GET', `/api/workflows/${encodeURIComponent(id)}/status`);
      printData(g, r, () => workflowStatusText(r));
      process.exitCode = statusExit(String(r['status']));
    }));
  examples(wstatus, 'cadre workflow status wf_0123456789abcdef01234567');
  const wcancel = wf.command('cancel <workflowId>').description('cancel a running workflow')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('POST', `/api/workflows/cancel/${encodeURIComponent(id)}`);
      printData(g, r, () => `${id} ${r['status']}`);
    }));
  examples(wcancel, 'cadre workflow cancel wf_0123456789abcdef01234567');
  const runs = wf.command('runs').description('workflow executions, newest first')
    .option('--status <status>', 'only these (queued, in_progress, awaiting_approval, completed, failed, cancelled)')
    .option('--limit <n>', 'how many', '20')
    .option('--page <n>', 'which page', '1')
    .action(async (o: { status?: string; limit: string; page: string }, cmd: Command) => {
      for (const [k, v] of [['--limit', o.limit], ['--page', o.page]] as const) if (!/^\d+$/.test(v) || Number(v) < 1) throw usage(`${k} must be a positive integer (got "${v}")`);
      await withTarget(cmd, async (t, g) => {
        const q = new URLSearchParams({ limit: o.limit, page: o.page, ...(o.status ? { status: o.status } : {}) });
        const r = await t.api.call<Json>('GET', `/api/workflows?${q}`);
        const rows = [['ID', 'WORKFLOW', 'STATUS', 'PROGRESS', 'CREATED']];
        for (const w of r['workflows'] as Json[]) rows.push([String(w['workflowId']), String(w['workflow']), String(w['status']), `${w['progress']}%`, String(w['createdAt'])]);
        printData(g, r, () => ((r['workflows'] as Json[]).length === 0 ? 'no workflow runs' : `${table(rows)}${r['total']} in all`));
      });
    });
  examples(runs, 'cadre workflow runs', 'cadre workflow runs --status failed --json');
}
