/** The command tree's conventions (cli/src/program.ts): examples in every --help, the natural-language form, completion. */
import { strict as assert } from 'node:assert';
import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import { bashCompletion, fishCompletion } from '../../../cli/src/completion';
import { buildCli, routeNaturalLanguage } from '../../../cli/src/program';
import { TASK_VERBS } from '../../../server/src/engine/catalog/verbs';
import { SERVER_LOG as CLI_SERVER_LOG } from '../../../cli/src/commands/system';
import { SERVER_LOG } from '../../../server/src/host/standalone';

function all(cmd: Command, prefix = 'cadre'): Array<{ path: string; cmd: Command }> {
  return [{ path: prefix, cmd }, ...cmd.commands.flatMap((c) => all(c, `${prefix} ${c.name()}`))];
}

function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (out += s) });
  cmd.outputHelp();
  return out;
}

describe('cadre command tree', () => {
  const program = buildCli();

  it('has the contract\'s commands: every task verb, agents, fleet, rigor, workflow, status, health, logs, invoke, webhook, auth', () => {
    const names = program.commands.map((c) => c.name());
    for (const n of [...TASK_VERBS, 'agents', 'fleet', 'rigor', 'workflow', 'status', 'health', 'logs', 'invoke', 'webhook', 'auth', 'approvals', 'approve', 'deny', 'keys', 'audit', 'serve', 'completion', 'ask']) {
      assert.ok(names.includes(n), `cadre ${n}`);
    }
    const sub = (g: string) => program.commands.find((c) => c.name() === g)!.commands.map((c) => c.name());
    assert.deepEqual(sub('rigor'), ['invoke', 'status', 'health']);
    assert.deepEqual(sub('webhook'), ['add', 'list', 'remove', 'test', 'deliveries', 'redeliver']);
    assert.deepEqual(sub('auth'), ['login', 'logout', 'status']);
    assert.deepEqual(sub('workflow'), ['list', 'run', 'status', 'cancel', 'runs']);
    assert.deepEqual(sub('fleet'), ['status', 'schedule']);
  });

  it('shows at least one example in the --help of every command', () => {
    for (const { path, cmd } of all(program)) {
      assert.match(helpOf(cmd), /\nExamples?:\n {2}\$? ?cadre|\nExamples?:\n {2}(\$ )?(echo|export|source|CADRE_API_KEY)|\nExamples?:\n {2}\$ /, `${path} --help has no example`);
    }
  });

  it('lists the workflows with their agents in workflow run --help, and the exit codes in cadre --help', () => {
    const run = program.commands.find((c) => c.name() === 'workflow')!.commands.find((c) => c.name() === 'run')!;
    assert.match(helpOf(run), /^ {2}full-sdlc +req-ai → planner-ai/m);
    assert.match(helpOf(program), /^ {2}5 {4}the execution waits for an approval/m);
  });

  it('routes a first word with spaces to the natural-language router, and nothing else', () => {
    const argv = (...a: string[]) => ['node', 'cli.js', ...a];
    assert.deepEqual(routeNaturalLanguage(argv('review the payment module', '--yes'), program), argv('ask', 'review the payment module', '--yes'));
    assert.deepEqual(routeNaturalLanguage(argv('--url', 'http://x:1', 'run the tests'), program), argv('--url', 'http://x:1', 'ask', 'run the tests'));
    assert.deepEqual(routeNaturalLanguage(argv('review', 'the payment module'), program), argv('review', 'the payment module'));
    assert.deepEqual(routeNaturalLanguage(argv('rigr'), program), argv('rigr'), 'a single unknown word stays an unknown command');
  });

  it('completes subcommands and options from the tree for bash and fish', () => {
    const bash = bashCompletion(program);
    assert.match(bash, /"cadre rigor"\) echo "invoke status health" ;;/);
    assert.match(bash, /complete -F _cadre_complete cadre/);
    const fish = fishCompletion(program);
    assert.match(fish, /complete -c cadre -n '__fish_use_subcommand' -a 'review'/);
    assert.match(fish, /complete -c cadre -n '__fish_seen_subcommand_from webhook' -a 'redeliver'/);
  });

  it('reads the server log under the name the server writes it', () => {
    assert.equal(CLI_SERVER_LOG, SERVER_LOG);
  });

  it('bash completes commands, subcommands and options when the script is sourced', function () {
    if (spawnSync('bash', ['--version']).status !== 0) this.skip();
    const complete = (...words: string[]) => {
      const script = `${bashCompletion(program)}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _cadre_complete; echo "\${COMPREPLY[@]}"`;
      return spawnSync('bash', ['-c', script], { encoding: 'utf8' }).stdout.trim();
    };
    assert.equal(complete('cadre', 'rig'), 'rigor');
    assert.equal(complete('cadre', 'rigor', 'in'), 'invoke');
    assert.equal(complete('cadre', 'rigor', 'invoke', '--acm'), '--acmf-mode');
    assert.equal(complete('cadre', 'webhook', 'red'), 'redeliver');
  });
});
