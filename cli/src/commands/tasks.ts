/**
 * The task verbs (contract "Clients": code, review, test, deploy, monitor, debug, incident, maintain,
 * capacity, backup, security), the natural-language form `cadre "<instruction>"` (`cadre ask`),
 * direct agent actions (`invoke <agent> <action>`), and following or cancelling one execution.
 */
import { type Command, Option } from 'commander';
import { createInterface } from 'node:readline/promises';
import { agentsOf, classifyIntent, type Intent, type IntentAgent, targetName } from '../../../server/src/engine/catalog/intents';
import { findAction, findAgent } from '../../../server/src/engine/catalog/index';
import { VERBS } from '../../../server/src/engine/catalog/verbs';
import { findWorkflow } from '../../../server/src/engine/catalog/workflows';
import { INTELLIGENCE_TIERS, PRIORITIES, SCOPES } from '../../../server/src/engine/catalog/enums';
import { CliError, usage } from '../cli-error';
import type { GlobalOptions, Target } from '../connection';
import { EXIT } from '../exit-codes';
import type { Json } from '../http-client';
import { afterSubmit, examples, inputOf, printData, printJson, sourceOf, withTarget, write } from '../context';

/**
 * Verbs whose agents work on a project folder: without `--source` they take the current directory,
 * as a user who types `cadre review` inside a project expects (the others read the instruction, a
 * trace or metrics, and a folder would only widen what they may touch).
 */
export const WORKSPACE_VERBS: ReadonlySet<string> = new Set(['review', 'test', 'security', 'code', 'deploy', 'maintain', 'backup']);

interface RunOptions {
  watch?: boolean;
  wait?: boolean;
  scope?: string;
  intelligence?: string;
  priority?: string;
  source?: string;
  input?: string;
  inputFile?: string;
}

/** The options of everything that starts an execution. */
function runOptions(c: Command, what: string): Command {
  return c
    .option('-w, --watch', `follow the RIGOR progress of the ${what} until it ends (exit 1 when it fails, 5 when it waits for an approval)`)
    .option('--wait', 'with --watch: keep following while it waits for an approval instead of exiting 5')
    .addOption(new Option('-s, --scope <scope>', 'RIGOR quality level').choices(SCOPES))
    .addOption(new Option('-i, --intelligence <tier>', 'intelligence tier').choices(INTELLIGENCE_TIERS));
}

function agentList(agents: IntentAgent[]): string {
  return agents.map((a) => (a.minIntelligence ? `${a.agent} (at ${a.minIntelligence})` : a.agent)).join(', ');
}

async function submitVerb(t: Target, g: GlobalOptions, verb: string, instruction: string, o: RunOptions): Promise<void> {
  const def = VERBS.find((v) => v.verb === verb)!;
  const source = o.source !== undefined ? sourceOf(o.source) : WORKSPACE_VERBS.has(verb) ? process.cwd() : undefined;
  const input = await inputOf(o);
  const r = await t.api.call<Json>('POST', '/v1/agents/tasks', {
    task: instruction, verb, capabilities: [def.capability],
    ...(o.scope ? { scope: o.scope } : {}), ...(o.intelligence ? { intelligence: o.intelligence } : {}), ...(o.priority ? { priority: o.priority } : {}),
    ...(source ? { source } : {}), ...(input ? { input } : {}),
  });
  if (g.json && !o.watch) printJson(r);
  else if (!g.json) write(`${r['taskId']} ${r['status']}${source ? ` on ${source}` : ''}; agents: ${(r['agentsAssigned'] as string[]).join(', ')}\n`);
  await afterSubmit(t, g, r['taskId'] as string, { watch: o.watch === true, wait: o.wait === true });
}

export async function invokeWorkflow(t: Target, g: GlobalOptions, name: string, prompt: string, o: RunOptions & { capability?: string }): Promise<void> {
  const wf = findWorkflow(name);
  // An unknown name goes to the server as given: a server with other workflows may know it.
  const capability = o.capability ?? wf?.capabilities[0] ?? 'BUILD';
  const source = o.source !== undefined ? sourceOf(o.source) : undefined;
  const r = await t.api.call<Json>('POST', '/api/workflows/invoke', {
    capability, workflow: name,
    input: { prompt, ...(o.scope ? { scope: o.scope } : {}), ...(o.intelligence ? { intelligence: o.intelligence } : {}), ...(source ? { source } : {}) },
  });
  if (g.json && !o.watch) printJson(r);
  else if (!g.json) write(`${r['workflowId']} accepted\n`);
  await afterSubmit(t, g, r['workflowId'] as string, { watch: o.watch === true, wait: o.wait === true });
}

/** "review" → what the router chose and why, in the lines `cadre ask` prints before it runs anything. */
export function describeIntent(intent: Intent): string {
  const name = targetName(intent.target);
  const kind = intent.target.kind === 'verb' ? `cadre ${name}` : `cadre workflow run ${name}`;
  const lines = [`→ ${kind}: ${agentList(intent.agents)}`, `  why: ${intent.reason}`];
  if (intent.alternatives.length > 0) {
    lines.push(`  also considered: ${intent.alternatives.slice(0, 3).map((a) => `${targetName(a.target)} (score ${a.score})`).join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(question)).trim().toLowerCase();
    return answer === '' || answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}

export function registerTaskCommands(program: Command): void {
  for (const def of VERBS) {
    const onWorkspace = WORKSPACE_VERBS.has(def.verb);
    const agents = agentList(agentsOf({ kind: 'verb', verb: def.verb }));
    const c = runOptions(program.command(`${def.verb} [instruction...]`), 'task')
      .description(`${def.capability} task: ${def.description} (agents: ${agents})`)
      .option('--source <path>', `project folder or repository URL${onWorkspace ? ' (default: the current directory)' : ''}`)
      .option('--input <json>', 'input of the steps as a JSON object (e.g. {"trace": "..."}, {"files": ["src/a.ts"]})')
      .option('--input-file <file>', 'the same from a file (- reads stdin)')
      .addOption(new Option('--priority <priority>', 'task priority').choices(PRIORITIES))
      .action(async (words: string[], o: RunOptions, cmd: Command) =>
        withTarget(cmd, (t, g) => submitVerb(t, g, def.verb, words.join(' ').trim() || `${def.verb} ${o.source ?? (onWorkspace ? 'the project' : '')}`.trim(), o)));
    examples(c, `cadre ${def.verb}${onWorkspace ? '' : ' "<what to do>"'} --watch`, `cadre ${def.verb} "${exampleOf(def.verb)}"${onWorkspace ? ' --source ./service' : ''} --json`);
  }

  const ask = runOptions(program.command('ask <instruction...>'), 'run')
    .description('route an instruction in plain words to the agents that fit (a deterministic keyword table, docs/cli.md); also: cadre "<instruction>"')
    .option('--source <path>', 'project folder or repository URL (default: the current directory)')
    .option('-n, --dry-run', 'print the chosen agents and why, run nothing')
    .action(async (words: string[], o: RunOptions & { dryRun?: boolean }, cmd: Command) => {
      const instruction = words.join(' ').trim();
      const intent = classifyIntent(instruction);
      const g = cmd.optsWithGlobals() as GlobalOptions;
      if (!intent) {
        throw new CliError(`cannot tell which agents "${instruction}" is for; name the job (e.g. review, test, security, deploy) or run a verb directly: cadre --help`, EXIT.USAGE);
      }
      if (g.json && o.dryRun) return printJson(intent);
      if (!g.json) process.stderr.write(describeIntent(intent));
      if (o.dryRun) return;
      if (!g.yes && process.stdin.isTTY && process.stderr.isTTY) {
        if (!(await confirm('Run it? [Y/n] '))) throw new CliError('not run', EXIT.FAILED);
      }
      await withTarget(cmd, async (t, gl) => {
        if (intent.target.kind === 'verb') {
          const verb = intent.target.verb;
          const source = o.source ?? (WORKSPACE_VERBS.has(verb) ? process.cwd() : undefined);
          return submitVerb(t, gl, verb, instruction, { ...o, ...(source ? { source } : {}) });
        }
        return invokeWorkflow(t, gl, intent.target.workflow, instruction, { ...o, source: o.source ?? process.cwd() });
      });
    });
  examples(ask, 'cadre "review the payment module for injection bugs"', 'cadre ask "why does the login page crash" --dry-run', 'cadre "run the tests" --yes --watch');

  const invoke = runOptions(program.command('invoke <agent> <action> [prompt...]'), 'action')
    .description('run one direct action of an agent (e.g. security-ai scan, observe-ai analyze) through RIGOR')
    .option('--input <json>', 'the action\'s input as a JSON object')
    .option('--input-file <file>', 'the same from a file (- reads stdin)')
    .option('--source <path>', 'project folder or repository URL (default: the server\'s workspace)')
    .action(async (agentId: string, action: string, words: string[], o: RunOptions, cmd: Command) => {
      const agent = findAgent(agentId);
      if (!agent) throw usage(`unknown agent "${agentId}" (cadre agents list names the 25)`);
      if (!findAction(agent.id, action)) throw usage(`${agent.id} has no action "${action}" (its actions: ${agent.actions.map((a) => a.name).join(', ')})`);
      const input = await inputOf(o);
      await withTarget(cmd, async (t, g) => {
        const source = o.source !== undefined ? sourceOf(o.source) : undefined;
        const prompt = words.join(' ').trim();
        const r = await t.api.call<Json>('POST', `/api/agents/${encodeURIComponent(agent.id)}/${encodeURIComponent(action)}`, {
          ...(prompt ? { prompt } : {}), ...(input ? { input } : {}), ...(source ? { source } : {}),
          ...(o.scope ? { scope: o.scope } : {}), ...(o.intelligence ? { intelligence: o.intelligence } : {}),
        });
        if (g.json && !o.watch) printJson(r);
        else if (!g.json) write(`${r['executionId']} ${r['status']}: ${agent.id} ${action}\n`);
        await afterSubmit(t, g, r['executionId'] as string, { watch: o.watch === true, wait: o.wait === true });
      });
    });
  examples(invoke, 'cadre invoke security-ai scan --source . --watch', 'cadre invoke observe-ai analyze --input \'{"metrics": "metrics.prom"}\' --source ./ops', 'cadre invoke debug-ai explain --input-file trace.json --json');

  const watch = program.command('watch <id>')
    .description('follow an execution\'s RIGOR progress until it ends (resumes after a dropped connection)')
    .option('--wait', 'keep following while it waits for an approval instead of exiting 5')
    .action(async (id: string, o: { wait?: boolean }, cmd: Command) => withTarget(cmd, (t, g) => afterSubmit(t, g, id, { watch: true, wait: o.wait === true })));
  examples(watch, 'cadre watch task_0123456789abcdef01234567', 'cadre watch wf_0123456789abcdef01234567 --json   # one event per line');

  const cancel = program.command('cancel <id>')
    .description('cancel a running execution (the running agent is stopped)')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await t.api.call<Json>('POST', `/api/workflows/cancel/${encodeURIComponent(id)}`);
      printData(g, r, () => `${id} ${r['status']}`);
    }));
  examples(cancel, 'cadre cancel wf_0123456789abcdef01234567');
}

function exampleOf(verb: string): string {
  const ex: Record<string, string> = {
    code: 'add a health endpoint', review: 'review src/payments for injection bugs', test: 'run the unit tests', debug: 'TypeError: cannot read properties of undefined',
    security: 'scan for leaked secrets', deploy: 'is main ready to ship', monitor: 'latency of the checkout service', incident: 'checkout is down since 10:02',
    maintain: 'weekly maintenance', capacity: 'when does the disk fill up', backup: 'snapshot before the migration',
  };
  return ex[verb] ?? verb;
}
