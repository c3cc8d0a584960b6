/**
 * Risk assessment of a proposed action: deterministic, table-driven, explained. Every rule that
 * fires adds a human-readable reason; the level is the highest any rule reached
 * (none < low < medium < high < critical). See docs/decisions.md "ACMF risk rules".
 *
 * Invariant the policy relies on: `none` is reserved for pure reads; every action that changes
 * something (or whose kind is unknown) is at least `low`.
 */
import type { Scope } from '../catalog/enums';
// Action kinds: one table for ACMF risk, the gate evaluators and the workers.
import { DESTRUCTIVE_KINDS, EXTERNAL_KINDS, KNOWN_CHANGE_KINDS, PRODUCTION_KINDS, READ_KINDS, SECURITY_KIND_TOKENS } from '../catalog/action-kinds';
export { EXTERNAL_KINDS, PRODUCTION_KINDS, READ_KINDS } from '../catalog/action-kinds';
import type { ProposedAction, RiskLevel } from './records';

/** Risk levels, lowest first. */
export const RISK_LEVELS = ['none', 'low', 'medium', 'high', 'critical'] as const satisfies readonly RiskLevel[];

/** Position of a level in {@link RISK_LEVELS}: compare levels with it. */
export function riskRank(level: RiskLevel): number {
  return RISK_LEVELS.indexOf(level);
}

export function maxRisk(a: RiskLevel, b: RiskLevel): RiskLevel {
  return riskRank(a) >= riskRank(b) ? a : b;
}

export function isRiskLevel(value: unknown): value is RiskLevel {
  return typeof value === 'string' && (RISK_LEVELS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// Path sets used by the approval categories (workspace-relative globs, see matchesGlob).
// ---------------------------------------------------------------------------------------------

/** Secrets, keys, auth and security configuration. */
export const SECURITY_SENSITIVE_GLOBS: readonly string[] = [
  '.env', '.env.*', '*.pem', '*.key', '*.p12', '*.pfx', '*.jks', '*.keystore', 'id_rsa*', 'id_ed25519*', '.ssh/',
  '**/secrets/**', '*secret*', '*credential*', '.npmrc', '.pypirc', '.netrc', '**/auth/**', '**/security/**',
  '*.auth.*', 'CODEOWNERS',
];
/** Continuous-integration definitions. */
export const CI_GLOBS: readonly string[] = [
  '.github/workflows/**', '.github/actions/**', '.gitlab-ci.yml', '.circleci/**', 'Jenkinsfile', 'azure-pipelines.yml',
  '.buildkite/**', '.travis.yml',
];
/** Infrastructure as code and deployment descriptors. */
export const INFRASTRUCTURE_GLOBS: readonly string[] = [
  '*.tf', '*.tfvars', '**/terraform/**', '**/k8s/**', '**/kubernetes/**', '**/helm/**', '**/charts/**', 'Dockerfile',
  '*.Dockerfile', 'docker-compose*.{yml,yaml}', '*.bicep', '**/cloudformation/**', '**/pulumi/**', '**/ansible/**',
];
/** Dependency manifests and lock files. */
export const DEPENDENCY_GLOBS: readonly string[] = [
  'package.json', 'package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'go.mod', 'go.sum',
  'Cargo.toml', 'Cargo.lock', 'pyproject.toml', 'poetry.lock', 'Pipfile', 'Pipfile.lock', 'requirements*.txt',
  'Gemfile', 'Gemfile.lock', 'composer.json', 'composer.lock',
];
/**
 * Cadre's own configuration: it holds `acmf_mode` and `approval_required_for`, so an agent changing
 * it could raise its own autonomy. Always critical.
 */
export const CADRE_CONFIG_GLOBS: readonly string[] = ['.cadre.yaml', '.cadre.yml'];

/** A sensible default for the `protectedPaths` setting (the host may use its own list). */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = ['.git/**', ...CI_GLOBS, 'package-lock.json', 'yarn.lock', 'pnpm-lock.yaml'];

/** Named values of `approval_required_for`; any other value is a path glob. */
export const APPROVAL_CATEGORIES = [
  'production_changes',
  'security_sensitive',
  'destructive_changes',
  'ci_changes',
  'infrastructure_changes',
  'dependency_changes',
] as const;
export type ApprovalCategory = (typeof APPROVAL_CATEGORIES)[number];

export function isApprovalCategory(value: string): value is ApprovalCategory {
  return (APPROVAL_CATEGORIES as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// Globs
// ---------------------------------------------------------------------------------------------

const REGEX_SPECIAL = /[.+^${}()|[\]\\]/;
const globCache = new Map<string, RegExp>();

/**
 * Compiles a workspace-relative glob: `**` as a whole segment = any number of directories
 * (including none), `*` = any characters but `/`, `?` = one character but `/`, `{a,b}` = either
 * (not nested). As in .gitignore, a pattern without an inner `/` matches at any depth
 * (`*.pem` = `**\/*.pem`, `secrets/` = `**\/secrets/**`), one with an inner `/` is anchored at the
 * workspace root; a trailing `/` means everything under that directory; a leading `./` or `/`
 * anchors explicitly. Case-sensitive; `*` also matches dot files (protection errs on the safe side).
 */
export function globToRegExp(glob: string): RegExp {
  const cached = globCache.get(glob);
  if (cached) return cached;
  let pattern = glob.trim().replace(/\\/g, '/');
  const directory = pattern.length > 1 && pattern.endsWith('/');
  if (directory) pattern = pattern.replace(/\/+$/, '');
  if (pattern.startsWith('./')) pattern = pattern.slice(2);
  else if (pattern.startsWith('/')) pattern = pattern.slice(1);
  else if (!pattern.includes('/')) pattern = `**/${pattern}`;
  if (directory) pattern += '/**';

  let out = '';
  let braceDepth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const wholeSegment = (i === 0 || pattern[i - 1] === '/') && (i + 2 === pattern.length || pattern[i + 2] === '/');
        i++;
        if (wholeSegment) {
          if (pattern[i + 1] === '/') {
            out += '(?:.*/)?';
            i++;
          } else {
            out += '.*';
          }
          continue;
        }
      }
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '{' && pattern.indexOf('}', i) > i) {
      braceDepth++;
      out += '(?:';
    } else if (c === ',' && braceDepth > 0) {
      out += '|';
    } else if (c === '}' && braceDepth > 0) {
      braceDepth--;
      out += ')';
    } else {
      out += REGEX_SPECIAL.test(c) ? `\\${c}` : c;
    }
  }
  const re = new RegExp(`^${out}$`);
  globCache.set(glob, re);
  return re;
}

/** Normalised workspace-relative form of a path, or null when it is absolute or escapes the workspace. */
export function normalizeWorkspacePath(path: string): string | null {
  const p = path.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return null;
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else {
      out.push(seg);
    }
  }
  return out.join('/');
}

/** True when the workspace-relative `path` matches `glob` (see {@link globToRegExp}). */
export function matchesGlob(path: string, glob: string): boolean {
  const normalized = normalizeWorkspacePath(path) ?? path.replace(/\\/g, '/');
  return globToRegExp(glob).test(normalized);
}

/** The first glob of `globs` that `path` matches, if any. */
export function firstMatch(path: string, globs: readonly string[]): string | undefined {
  return globs.find((g) => matchesGlob(path, g));
}

// ---------------------------------------------------------------------------------------------
// Assessment
// ---------------------------------------------------------------------------------------------

export interface RiskContext {
  /** Globs of protected paths: a change to one is high risk. */
  protectedPaths: readonly string[];
  /** `approval_required_for` of the agent: category names ({@link APPROVAL_CATEGORIES}) or path globs. */
  approvalRequiredFor: readonly string[];
  /** The task's RIGOR quality level. */
  scope?: Scope;
}

export interface RiskAssessment {
  level: RiskLevel;
  /** One sentence per rule that fired, in rule order. */
  reasons: string[];
}

/** Facts about an action that the rules read; computed once. */
interface ActionFacts {
  kind: string;
  read: boolean;
  paths: string[];
  outside: string[];
  destructive: string | null;
  external: boolean;
  production: boolean;
  security: string | null;
}

function describePaths(paths: string[]): string {
  return paths.length <= 3 ? paths.join(', ') : `${paths.slice(0, 3).join(', ')} and ${paths.length - 3} more`;
}

/** Paths of the action matching any of `globs`, each with the glob it matched. */
function matching(facts: ActionFacts, globs: readonly string[]): Array<{ path: string; glob: string }> {
  const hits: Array<{ path: string; glob: string }> = [];
  for (const path of facts.paths) {
    const glob = firstMatch(path, globs);
    if (glob !== undefined) hits.push({ path, glob });
  }
  return hits;
}

function describeHits(hits: Array<{ path: string; glob: string }>): string {
  const shown = hits.slice(0, 3).map((h) => `${h.path} (matches ${h.glob})`).join(', ');
  return hits.length > 3 ? `${shown} and ${hits.length - 3} more` : shown;
}

function factsOf(action: ProposedAction): ActionFacts {
  const kind = action.kind.trim().toLowerCase();
  const paths = (action.paths ?? []).filter((p) => p.trim() !== '');
  const outside = paths.filter((p) => normalizeWorkspacePath(p) === null);
  const destructive = action.destructive ? (DESTRUCTIVE_KINDS[kind] ?? 'is flagged destructive') : (DESTRUCTIVE_KINDS[kind] ?? null);
  const external = action.external === true || EXTERNAL_KINDS.has(kind);
  const production = action.production === true || PRODUCTION_KINDS.has(kind);
  const read = READ_KINDS.has(kind) && !external && !production && destructive === null;
  const securityToken = kind.split(/[_\-.]/).find((t) => SECURITY_KIND_TOKENS.has(t));
  let security: string | null = securityToken ? `its kind (${action.kind}) concerns ${securityToken}` : null;
  if (!read && security === null) {
    const hits = paths.flatMap((path) => {
      const glob = firstMatch(path, SECURITY_SENSITIVE_GLOBS);
      return glob === undefined ? [] : [{ path, glob }];
    });
    if (hits.length > 0) security = `it touches security-sensitive paths: ${describeHits(hits)}`;
  }
  return { kind, read, paths, outside, destructive, external, production, security };
}

interface Rule {
  /** Level when the rule fires, with its reason; null when it does not fire. */
  apply(facts: ActionFacts, ctx: RiskContext): { level: RiskLevel; reason: string } | null;
}

/** The category predicates of `approval_required_for`: what each category covers. */
const CATEGORY_MATCHERS: Readonly<Record<ApprovalCategory, (f: ActionFacts) => string | null>> = {
  production_changes: (f) => (f.production ? 'the action targets production' : null),
  security_sensitive: (f) => (f.read ? null : f.security),
  destructive_changes: (f) => (f.destructive ? `the action ${f.destructive}` : null),
  ci_changes: (f) => pathCategory(f, CI_GLOBS, 'CI definitions'),
  infrastructure_changes: (f) => pathCategory(f, INFRASTRUCTURE_GLOBS, 'infrastructure files'),
  dependency_changes: (f) => pathCategory(f, DEPENDENCY_GLOBS, 'dependency manifests or lock files'),
};

function pathCategory(f: ActionFacts, globs: readonly string[], what: string): string | null {
  if (f.read) return null;
  const hits = matching(f, globs);
  return hits.length > 0 ? `it changes ${what}: ${describeHits(hits)}` : null;
}

/** The rules, in the order their reasons are listed. Each may only raise the level. */
const RULES: readonly Rule[] = [
  {
    // Baseline: reads are none, anything else changes something (an unknown kind included).
    apply: (f) => {
      if (f.read) return { level: 'none', reason: `read-only action (${f.kind}): changes nothing` };
      const where = f.paths.length > 0 ? `: ${describePaths(f.paths)}` : '';
      if (READ_KINDS.has(f.kind)) return { level: 'low', reason: `not a pure read (${f.kind}): flagged external, production or destructive` };
      return KNOWN_CHANGE_KINDS.has(f.kind)
        ? { level: 'low', reason: `changes something (${f.kind})${where}` }
        : { level: 'low', reason: `unknown action kind ${f.kind}: treated as a change inside the workspace${where}` };
    },
  },
  {
    apply: (f) =>
      !f.read && f.outside.length > 0
        ? { level: 'critical', reason: `writes outside the workspace: ${describePaths(f.outside)}` }
        : null,
  },
  {
    apply: (f) => (f.destructive ? { level: 'high', reason: `destructive: ${f.destructive}` } : null),
  },
  {
    apply: (f, ctx) => {
      if (f.read || ctx.protectedPaths.length === 0) return null;
      const hits = matching(f, ctx.protectedPaths);
      return hits.length > 0 ? { level: 'high', reason: `touches protected paths: ${describeHits(hits)}` } : null;
    },
  },
  {
    apply: (f) => (!f.read && f.security ? { level: 'medium', reason: `security-sensitive: ${f.security}` } : null),
  },
  {
    apply: (f) => (f.external ? { level: 'medium', reason: `external side effect: ${f.kind} leaves the machine` } : null),
  },
  {
    apply: (f) => (f.production ? { level: 'critical', reason: `targets production (${f.kind})` } : null),
  },
  {
    apply: (f) => {
      if (f.read) return null;
      const hits = matching(f, CADRE_CONFIG_GLOBS);
      return hits.length > 0
        ? { level: 'critical', reason: `changes Cadre's own configuration (autonomy settings): ${describeHits(hits)}` }
        : null;
    },
  },
  {
    apply: (f, ctx) =>
      f.destructive && ctx.scope === 'production'
        ? { level: 'critical', reason: 'destructive change in a task of scope production' }
        : null,
  },
  {
    apply: (f, ctx) => {
      const matched: string[] = [];
      const globs: string[] = [];
      for (const entry of ctx.approvalRequiredFor) {
        if (isApprovalCategory(entry)) {
          const why = CATEGORY_MATCHERS[entry](f);
          if (why !== null) matched.push(`${entry} (${why})`);
        } else if (entry.trim() !== '') {
          globs.push(entry);
        }
      }
      if (!f.read && globs.length > 0) {
        const hits = matching(f, globs);
        if (hits.length > 0) matched.push(`paths ${describeHits(hits)}`);
      }
      return matched.length > 0 ? { level: 'critical', reason: `approval_required_for: ${matched.join('; ')}` } : null;
    },
  },
];

/**
 * Rates a proposed action. Deterministic: the same action and context always give the same
 * level and reasons.
 */
export function assessRisk(action: ProposedAction, ctx: RiskContext): RiskAssessment {
  const facts = factsOf(action);
  let level: RiskLevel = 'none';
  const reasons: string[] = [];
  for (const rule of RULES) {
    const hit = rule.apply(facts, ctx);
    if (hit === null) continue;
    level = maxRisk(level, hit.level);
    reasons.push(hit.reason);
  }
  return { level, reasons };
}
