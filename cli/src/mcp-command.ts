/**
 * `cadre mcp`: prints how other MCP clients reach the server's MCP endpoint (`<url>/mcp`, docs/mcp.md):
 * Claude Code, Codex, Cline and VS Code, each in the form its documentation shows. Nothing is sent
 * and nothing is written: the user pastes what fits.
 *
 * The API key stays out of files where the client can read it from the environment (Codex's
 * `bearer_token_env_var`, VS Code's password input, the shell of `claude mcp add`); Cline's settings
 * file only takes a literal header, so it gets a placeholder unless `--show-key` prints the key
 * from CADRE_API_KEY.
 */
import type { Command } from 'commander';
import { CliError } from './cli-error';
import { defaultUrl } from './connection';

export const MCP_CLIENTS = ['claude-code', 'codex', 'cline', 'vscode'] as const;
export type McpClientName = (typeof MCP_CLIENTS)[number];

export interface McpSnippetOptions {
  /** The server's base URL, e.g. http://127.0.0.1:7450 (the endpoint is `<url>/mcp`). */
  url: string;
  /** The literal key to print (only with --show-key); else references to CADRE_API_KEY. */
  key?: string | undefined;
  /** The server runs with CADRE_MCP_AUTH=none: no header at all. */
  noAuth?: boolean;
  /** Name the clients list the server under. */
  name?: string;
}

export interface McpSnippet {
  client: McpClientName;
  title: string;
  /** Where it goes (a command to run or the file to edit). */
  where: string;
  language: 'sh' | 'toml' | 'json';
  text: string;
}

const PLACEHOLDER = '<your Cadre API key>';

/** The endpoint URL: `<url>/mcp`, with a trailing slash of `url` dropped; refuses what is not an http(s) URL. */
export function mcpEndpoint(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`"${url}" is not a URL (e.g. http://127.0.0.1:7450)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(`"${url}" is not an http(s) URL`);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}/mcp`;
}

/** The configuration snippets for every client (pure: tests call it). */
export function mcpSnippets(o: McpSnippetOptions): McpSnippet[] {
  const endpoint = mcpEndpoint(o.url);
  const name = o.name ?? 'cadre';
  const auth = !o.noAuth;
  const literal = o.key ?? PLACEHOLDER;
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return [
    {
      client: 'claude-code', title: 'Claude Code', where: 'run in a shell where CADRE_API_KEY is set (add --scope project to share it in .mcp.json)', language: 'sh',
      text: `claude mcp add --transport http ${name} ${endpoint}${auth ? ` --header "Authorization: Bearer ${o.key ?? '$CADRE_API_KEY'}"` : ''}`,
    },
    {
      client: 'codex', title: 'Codex', where: '~/.codex/config.toml (Codex reads the key from CADRE_API_KEY in its environment)', language: 'toml',
      text: [`[mcp_servers.${name}]`, `url = "${endpoint}"`, ...(auth ? ['bearer_token_env_var = "CADRE_API_KEY"'] : [])].join('\n'),
    },
    {
      client: 'cline', title: 'Cline', where: 'cline_mcp_settings.json (MCP Servers > Configure > Configure MCP Servers)', language: 'json',
      text: json({ mcpServers: { [name]: { type: 'streamableHttp', url: endpoint, ...(auth ? { headers: { Authorization: `Bearer ${literal}` } } : {}), disabled: false } } }),
    },
    {
      client: 'vscode', title: 'VS Code (another window or without the Cadre extension; the extension registers the server itself)', where: '.vscode/mcp.json (VS Code asks for the key once and keeps it in its secret storage)', language: 'json',
      text: json({
        ...(auth ? { inputs: [{ type: 'promptString', id: 'cadre-api-key', description: 'Cadre API key', password: true }] } : {}),
        servers: { [name]: { type: 'http', url: endpoint, ...(auth ? { headers: { Authorization: o.key ? `Bearer ${o.key}` : 'Bearer ${input:cadre-api-key}' } } : {}) } },
      }),
    },
  ];
}

/** The snippets as the terminal shows them: a heading, where it goes, the text. */
export function renderSnippets(snippets: readonly McpSnippet[]): string {
  return snippets.map((s) => `# ${s.title}\n# ${s.where}\n${s.text}\n`).join('\n');
}

interface McpCommandOptions { client?: string; showKey?: boolean; noAuth?: boolean; name?: string; json?: boolean; url?: string }

/** Registers `cadre mcp` (cli/src/main.ts calls it). */
export function registerMcpCommand(program: Command): void {
  program.command('mcp')
    .description('print the configuration that connects an MCP client (Claude Code, Codex, Cline, VS Code) to this server\'s /mcp endpoint')
    .option('--client <name>', `only this client: ${MCP_CLIENTS.join(', ')}`)
    .option('--show-key', 'print the key of CADRE_API_KEY into the snippets instead of referring to the variable')
    .option('--no-auth', 'without the Authorization header (a server started with CADRE_MCP_AUTH=none)')
    .option('--name <name>', 'the name clients list the server under', 'cadre')
    .addHelpText('after', '\nExamples:\n  cadre mcp\n  cadre mcp --client codex >> ~/.codex/config.toml\n  cadre --url http://127.0.0.1:7451 mcp --client claude-code\n\nDocs: docs/mcp.md')
    .action((_opts: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<McpCommandOptions & { auth?: boolean }>();
      // The server the other commands would use when nothing names one (127.0.0.1 on CADRE_PORT, else 7450).
      const url = o.url || process.env['CADRE_URL']?.trim() || defaultUrl();
      if (o.client !== undefined && !(MCP_CLIENTS as readonly string[]).includes(o.client)) {
        throw new CliError(`unknown client "${o.client}" (one of ${MCP_CLIENTS.join(', ')})`);
      }
      if (o.name !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(o.name)) throw new CliError(`--name "${o.name}" must be letters, digits, - or _ (at most 64)`);
      let key: string | undefined;
      if (o.showKey) {
        key = process.env['CADRE_API_KEY']?.trim();
        if (!key) throw new CliError('--show-key prints the key of CADRE_API_KEY, which is not set');
      }
      const all = mcpSnippets({ url, key, noAuth: o.auth === false, ...(o.name ? { name: o.name } : {}) });
      const chosen = o.client ? all.filter((s) => s.client === o.client) : all;
      if (o.json) process.stdout.write(`${JSON.stringify({ endpoint: mcpEndpoint(url), snippets: chosen }, null, 2)}\n`);
      else if (o.client) process.stdout.write(`${chosen[0]!.text}\n`);
      else process.stdout.write(`Cadre's MCP endpoint: ${mcpEndpoint(url)}${o.auth === false ? '' : ' (Authorization: Bearer <API key>)'}\n\n${renderSnippets(chosen)}`);
    });
}
