/**
 * `cadre auth login|logout|status`: a key per server URL in the CLI's credentials file (0600; see
 * credentials.ts), used by every command that talks to that server when CADRE_API_KEY is not set.
 */
import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { CliError, usage } from '../cli-error';
import { credentialsFile, loginOf, normalizeUrl, readCredentials, removeLogin, saveLogin } from '../credentials';
import { resolveUrl } from '../connection';
import { EXIT } from '../exit-codes';
import { ApiClient, type Json } from '../http-client';
import { examples, globals, printData, readStdin } from '../context';

/** Reads a key on a terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const out = rl as unknown as { _writeToOutput?: (s: string) => void };
    process.stderr.write(question);
    out._writeToOutput = () => {};
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer.trim());
    });
  });
}

/** Whether the server accepts the key (GET /v1/info needs one); throws the one-line error otherwise. */
async function check(url: string, key: string, source: string): Promise<Json> {
  return new ApiClient(url, key, { keySource: source, timeoutMs: 10_000 }).call<Json>('GET', '/v1/info');
}

export function registerAuthCommands(program: Command): void {
  const auth = program.command('auth').description('keep an API key per server for the CLI: login, logout, status');
  const login = auth.command('login')
    .description('check a key against a server and keep it (0600 file in the user\'s config directory); the server becomes the default')
    .option('-k, --key <key>', 'the API key (else read from stdin, or asked for on a terminal)')
    .option('--key-stdin', 'read the key from stdin')
    .action(async (o: { key?: string; keyStdin?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const url = await resolveUrl(g);
      let key = o.key?.trim() ?? '';
      if (!key && (o.keyStdin || !process.stdin.isTTY)) key = (await readStdin()).trim();
      else if (!key) key = await promptHidden(`API key for ${url}: `);
      if (!key) throw usage('no key given (--key, --key-stdin, or type it when asked)');
      await check(url, key, 'the key given');
      saveLogin(url, key);
      printData(g, { url, file: credentialsFile() }, () => `logged in to ${url}; the key is kept in ${credentialsFile()} (0600)`);
    });
  examples(login, 'cadre auth login --url http://127.0.0.1:7450', 'echo "$KEY" | cadre auth login --url http://build-box:7450 --key-stdin');

  const logout = auth.command('logout').description('forget the key kept for a server (the default one unless --url)')
    .action(async (_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const url = g.url ? normalizeUrl(g.url) : readCredentials().default;
      if (!url) throw new CliError('not logged in to any server');
      if (!removeLogin(url)) throw new CliError(`not logged in to ${url}`);
      printData(g, { url, loggedOut: true }, () => `logged out of ${url}`);
    });
  examples(logout, 'cadre auth logout', 'cadre auth logout --url http://build-box:7450');

  const status = auth.command('status').description('which server the CLI talks to, with which key, and whether the server accepts it (exit 4 when not)')
    .action(async (_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const url = await resolveUrl(g);
      const envKey = process.env['CADRE_API_KEY']?.trim();
      const saved = loginOf(url);
      const key = envKey || saved?.key;
      const source = envKey ? 'CADRE_API_KEY' : saved ? `${credentialsFile()} (saved ${saved.savedAt})` : null;
      const data: Json = { url, keySource: source, keyPrefix: key ? `${key.slice(0, 12)}…` : null, servers: Object.keys(readCredentials().servers).filter((s) => !s.startsWith('embedded:')) };
      if (!key) {
        printData(g, { ...data, accepted: false }, () => `${url}: no key (cadre auth login --url ${url}, or set CADRE_API_KEY)`);
        process.exitCode = EXIT.AUTH;
        return;
      }
      try {
        const info = await check(url, key, source!);
        printData(g, { ...data, accepted: true, version: info['version'] ?? null }, () => `${url}: logged in with ${key.slice(0, 12)}… from ${source}; the server accepts it`);
      } catch (err) {
        if (!(err instanceof CliError) || err.exitCode !== EXIT.AUTH) throw err;
        printData(g, { ...data, accepted: false, error: err.message }, () => `${url}: the key from ${source} is refused: ${err.message}`);
        process.exitCode = EXIT.AUTH;
      }
    });
  examples(status, 'cadre auth status', 'cadre auth status --json');
}
