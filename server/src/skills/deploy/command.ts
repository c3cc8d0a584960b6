/**
 * The deploy command deploy-ai's `deploy` would run for an environment, and the inputs both deploy
 * actions share (strategy, environment). Order: package.json `deploy:<env>`, then `deploy`; then a folder
 * of Kubernetes manifests applied with `kubectl apply -f <dir>` only when kubectl is on PATH (looked up
 * in PATH, nothing is run to find it); else none, with what to add.
 */
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import type { DeployFacts } from './facts';

export type Strategy = 'canary' | 'blue-green';

export interface DeployCommand {
  /** argv; argv[0] is the program. */
  argv: string[];
  /** Display form. */
  command: string;
  /** Why this command (file, line, field). */
  source: string;
  via: 'npm-script' | 'kubectl';
  file: string;
  line: number;
}

/** Environment names are used in a script name and an effect key: letters, digits, `.`, `_`, `-`. */
const ENV_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

export type DeployInput =
  | { ok: true; strategy: Strategy; environment: string; production: boolean }
  | { ok: false; field: 'strategy' | 'environment'; message: string };

/** Reads `strategy` (canary default, blue-green) and `environment` (staging default) from a step's input. */
export function parseDeployInput(input: Record<string, unknown>): DeployInput {
  const rawStrategy = input['strategy'];
  let strategy: Strategy = 'canary';
  if (rawStrategy !== undefined && rawStrategy !== null && rawStrategy !== '') {
    const s = String(rawStrategy).trim().toLowerCase().replace(/[\s_]+/g, '-');
    if (s === 'canary') strategy = 'canary';
    else if (s === 'blue-green' || s === 'bluegreen') strategy = 'blue-green';
    else return { ok: false, field: 'strategy', message: `strategy must be "canary" or "blue-green" (got "${String(rawStrategy).slice(0, 40)}")` };
  }
  const rawEnv = input['environment'];
  const environment = rawEnv === undefined || rawEnv === null || rawEnv === '' ? 'staging' : String(rawEnv).trim();
  if (!ENV_NAME.test(environment)) return { ok: false, field: 'environment', message: `environment must be a name of letters, digits, ".", "_" or "-" (at most 40), e.g. staging or production (got "${environment.slice(0, 40)}")` };
  return { ok: true, strategy, environment, production: environment.toLowerCase() === 'production' || environment.toLowerCase() === 'prod' };
}

/** The absolute path of `program` found in PATH (an executable regular file), or undefined. */
export function onPath(program: string, envPath = process.env['PATH'] ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, program);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch { /* not there */ }
  }
  return undefined;
}

export interface CommandLookup {
  command: DeployCommand | null;
  /** When there is none: why, and what to add. */
  missing: string | null;
}

/**
 * The deploy command for `environment`, or why there is none (naming what to add). `opts.kubectl`: where
 * kubectl is (null: not installed); looked up in PATH when not given.
 */
export function findDeployCommand(facts: DeployFacts, environment: string, opts: { kubectl?: string | null } = {}): CommandLookup {
  const kubectl = opts.kubectl === undefined ? onPath('kubectl') : opts.kubectl ?? undefined;
  const byName = (n: string) => facts.scripts.find((s) => s.name === n);
  const script = byName(`deploy:${environment}`) ?? byName('deploy');
  if (script) {
    const argv = ['npm', 'run', '--silent', script.name];
    return { command: { argv, command: argv.join(' '), source: `package.json scripts["${script.name}"] (${script.file}:${script.line}): ${script.command}`, via: 'npm-script', file: script.file, line: script.line }, missing: null };
  }
  const dir = facts.k8sDirs[0];
  if (dir !== undefined) {
    const k = facts.k8s.find((d) => path.posix.dirname(d.file) === dir);
    if (kubectl) {
      const argv = ['kubectl', 'apply', '-f', dir === '.' ? '.' : dir];
      return { command: { argv, command: argv.join(' '), source: `Kubernetes manifests in ${dir}/${k ? ` (${k.file}:${k.line} Deployment ${k.name})` : ''}; kubectl at ${kubectl}`, via: 'kubectl', file: k?.file ?? dir, line: k?.line ?? 1 }, missing: null };
    }
    return { command: null, missing: `no deploy command for ${environment}: Kubernetes manifests are in ${dir}/ but kubectl is not on PATH; install kubectl, or add a "deploy:${environment}" or "deploy" script to package.json` };
  }
  return { command: null, missing: `no deploy command for ${environment}: add a "deploy:${environment}" or "deploy" script to package.json (or Kubernetes manifests with kubectl on PATH)` };
}
