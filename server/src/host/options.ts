/** Command-line options of `dist/server.js`. */
import { homedir } from 'node:os';
import * as path from 'node:path';

export interface ServerOptions {
  standalone: boolean;
  port: number;
  dataDir: string;
  workspaceDir: string | undefined;
  /** CommonJS skill modules to load (repeatable `--skill-module`). */
  skillModules: string[];
}

export const DEFAULT_PORT = 7450;

export const SERVER_USAGE = `Usage: node dist/server.js [--standalone] [--port N] [--data-dir DIR] [--workspace DIR | --no-workspace]

  --standalone      run without an editor: serve the REST + SSE API until SIGTERM/SIGINT
                    (without it the process is a language server over --stdio or --node-ipc)
  --port N          port on 127.0.0.1 (default ${DEFAULT_PORT}; 0 = any free port)
  --data-dir DIR    store, audit trail and lock file (default $CADRE_HOME, else ~/.cadre)
  --workspace DIR   folder whose .cadre.yaml is read first and that requests without "source" work on
                    (default: the current directory)
  --no-workspace    serve without a default workspace: every request names its "source" (a request
                    whose agents need one and lacks it answers 422 ERR_NEEDS_INPUT)
  --skill-module F  load extra agent skills from a CommonJS module exporting "skills" (repeatable;
                    also CADRE_SKILL_MODULES, paths separated by "${path.delimiter}")
`;

export class UsageError extends Error {}

export function parseServerArgs(argv: string[], env: NodeJS.ProcessEnv): ServerOptions {
  const home = env['CADRE_HOME']?.trim() ? path.resolve(env['CADRE_HOME']) : path.join(homedir(), '.cadre');
  const opts: ServerOptions = { standalone: false, port: DEFAULT_PORT, dataDir: home, workspaceDir: undefined, skillModules: [] };
  let noWorkspace = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--standalone':
        opts.standalone = true;
        break;
      case '--port': {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n > 65535) throw new UsageError(`--port must be an integer from 0 to 65535 (got "${v}")`);
        opts.port = n;
        break;
      }
      case '--data-dir':
        opts.dataDir = path.resolve(value());
        break;
      case '--workspace':
        opts.workspaceDir = path.resolve(value());
        break;
      case '--no-workspace':
        if (inline !== undefined) throw new UsageError('--no-workspace takes no value');
        noWorkspace = true;
        break;
      case '--skill-module':
        opts.skillModules.push(path.resolve(value()));
        break;
      // Transport flags of vscode-languageserver; it reads them itself.
      case '--stdio':
      case '--node-ipc':
        break;
      default:
        if (flag.startsWith('--clientProcessId') || flag.startsWith('--socket') || flag.startsWith('--pipe')) break;
        throw new UsageError(`unknown option ${arg}`);
    }
  }
  if (noWorkspace && opts.workspaceDir !== undefined) throw new UsageError('--workspace and --no-workspace exclude each other');
  // A standalone server works where it was started, as git and npm do, unless told to serve without one.
  if (opts.standalone && opts.workspaceDir === undefined && !noWorkspace) opts.workspaceDir = process.cwd();
  return opts;
}
