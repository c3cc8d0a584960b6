/**
 * The `cadre` command tree. Commands talk to a Cadre server over HTTP (connection.ts picks which,
 * else runs the engine in this process); `serve` runs the server here. Conventions, kept by every
 * command (docs/cli.md): `--help` with examples, `--json` for data, one-line errors on stderr with the
 * documented exit codes (exit-codes.ts), no stack trace unless `--debug`. main.ts runs it.
 */
import { Command } from 'commander';
import { version as VERSION } from '../../package.json';
import { CliError } from './cli-error';
import { registerAgentCommands } from './commands/agents';
import { registerAuthCommands } from './commands/auth';
import { registerExecutionCommands } from './commands/executions';
import { registerSystemCommands } from './commands/system';
import { registerTaskCommands } from './commands/tasks';
import { registerWebhookCommands } from './commands/webhook';
import { registerIntegrationCommands } from './commands/integration';
import { registerTenantCommands } from './commands/tenant';
import { bashCompletion, fishCompletion, zshCompletion } from './completion';
import { examples } from './context';
import { EXIT } from './exit-codes';
import { registerKeysCommands } from './keys';
import { registerStoreCommands } from './store-commands';
import { registerMcpCommand } from './mcp-command';

const EXIT_CODES_HELP = `
Exit codes:
  0    done (an execution it followed completed)
  1    the execution failed or was cancelled, or the server refused the request
  2    usage: unknown command or option, bad argument (nothing was sent)
  3    no server answers (or the embedded engine could not start)
  4    authentication: no key, a wrong or revoked key, or a role too low
  5    the execution waits for an approval (the line before says: cadre approve appr_...)
  130  interrupted (Ctrl+C)

Server: --url, else the owner of the data directory, else the last "cadre auth login", else
http://127.0.0.1:7450, else the engine runs in this process (embedded). Key: CADRE_API_KEY, else the login.
Docs: docs/cli.md`;

export function buildCli(): Command {
  const program = new Command('cadre')
    .description('Cadre: 25 AI agents under RIGOR and ACMF, from the command line')
    .version(VERSION, '-V, --version')
    .option('-u, --url <url>', 'server URL (default: see "Server" below; also CADRE_URL)')
    .option('-d, --data-dir <dir>', 'data directory (default $CADRE_HOME, else ~/.cadre)')
    .option('--json', 'print data as JSON (with --watch: one event per line)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--no-embedded', 'never run the engine in this process: exit 3 when no server answers')
    .option('--no-color', 'plain lines, no colors or redrawing (also NO_COLOR)')
    .option('--debug', 'print stack traces and the embedded engine\'s log')
    .showSuggestionAfterError(true)
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      // Commander's own errors (unknown command or option, missing argument): one line, then exit 2.
      outputError: (str, write) => write(`cadre: ${str.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ').trim()} (see cadre --help)\n`),
    })
    .exitOverride()
    .addHelpText('after', EXIT_CODES_HELP);
  examples(program, 'cadre review --watch', 'cadre "review the payment module for injection bugs"', 'cadre workflow run full-sdlc "add a health endpoint" --watch', 'cadre agents list --json');

  registerTaskCommands(program);
  registerExecutionCommands(program);
  registerAgentCommands(program);
  registerSystemCommands(program);
  registerAuthCommands(program);
  registerWebhookCommands(program);
  registerIntegrationCommands(program);
  registerTenantCommands(program);
  registerKeysCommands(program);
  registerStoreCommands(program);
  registerMcpCommand(program);

  const completion = program.command('completion <shell>')
    .description('print the shell completion script for bash, zsh or fish')
    .action((shell: string) => {
      const gen = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion }[shell];
      if (!gen) throw new CliError(`no completion for "${shell}" (bash, zsh or fish)`, EXIT.USAGE);
      process.stdout.write(gen(program));
    });
  examples(completion, 'cadre completion bash > ~/.local/share/bash-completion/completions/cadre', 'cadre completion fish > ~/.config/fish/completions/cadre.fish', 'source <(cadre completion zsh)');

  // A group called without its subcommand: one line naming them (not the whole help). Its --help
  // shows an example of each subcommand.
  for (const group of program.commands.filter((c) => c.commands.length > 0)) {
    examples(group, ...group.commands.slice(0, 4).map((c) => `cadre ${group.name()} ${c.name()}${c.registeredArguments.map((a) => ` <${a.name()}>`).join('')}`));
    group.action(() => {
      throw new CliError(`${group.name()} needs a subcommand: ${group.commands.map((c) => c.name()).join(', ')} (see cadre ${group.name()} --help)`, EXIT.USAGE);
    });
  }
  return program;
}

/** Options that take a value, to find the first word that is not an option or its value. */
const VALUE_OPTIONS = new Set(['-u', '--url', '-d', '--data-dir']);

/**
 * `cadre "review the payment module"`: a first word with spaces in it that is no command is an
 * instruction for the natural-language router (`cadre ask`).
 */
export function routeNaturalLanguage(argv: string[], program: Command): string[] {
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_OPTIONS.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    const known = program.commands.some((c) => c.name() === a || c.aliases().includes(a));
    if (!known && /\s/.test(a.trim())) return [...argv.slice(0, 2), ...args.slice(0, i), 'ask', ...args.slice(i)];
    return argv;
  }
  return argv;
}

