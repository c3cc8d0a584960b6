/**
 * `${VAR}` interpolation and the secret rule, applied to the plain value of the YAML file before
 * schema validation. Pure: the environment is a parameter.
 *
 * - `${VAR}` is replaced by the variable's value in any string; `${VAR:-fallback}` uses `fallback`
 *   when VAR is unset or empty; `$${` writes a literal `${`.
 * - A plain (unquoted) scalar that is exactly one reference and resolves to a YAML boolean or number
 *   becomes that boolean or number (`port: ${CADRE_PORT}`, `enabled: ${TRACKER_ON}`).
 * - Secret keys (see `isSecretKey`) must hold exactly `${VAR}` (no fallback): an inline literal is an
 *   error. Secrets always stay strings.
 * - An unset variable is an error, except inside a disabled integration, where the value is dropped
 *   (treated as absent).
 * - A key whose value is empty (`key:` or `~`) is dropped: it means "absent, use the default".
 */
import { parse as parseYamlScalar } from 'yaml';

export type ConfigPath = Array<string | number>;

export interface InterpolationIssue {
  path: ConfigPath;
  message: string;
}

/** Key names that look like secrets by the rule below but are not. */
const NOT_SECRET = new Set(['aggregation_key']);

/**
 * True for a key whose value is a secret: a name containing `secret`, `token`, `password`/`passwd`,
 * a `key` word (`api_key`, `app_key`, `routing_key`, `access_key_id`, `apikey`), or `headers`
 * (OTLP headers carry credentials). `aggregation_key` is exempt.
 */
export function isSecretKey(name: string): boolean {
  const n = name.toLowerCase();
  if (NOT_SECRET.has(n)) return false;
  if (/secret|token|passw(?:or)?d/.test(n)) return true;
  if (n === 'headers') return true;
  return n.split(/[_\-.]/).some((word) => word.endsWith('key'));
}

/** Maps whose keys are the user's own data (the secret rule does not look at their key names). */
const FREE_FORM_MAPS: readonly ConfigPath[] = [
  ['integrations', 'tracker', 'projects', 'mapping'],
];

function isFreeFormEntry(path: ConfigPath): boolean {
  return FREE_FORM_MAPS.some((p) => path.length === p.length + 1 && p.every((seg, i) => path[i] === seg));
}

const WHOLE_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const REF_OR_ESCAPE = /\$\$\{|\$\{([^}]*)\}/g;
const REF_BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

export interface Interpolated {
  value: string;
  /** Variables that were referenced, unset and without a fallback. */
  missing: string[];
  /** Malformed references such as `${1X}`. */
  invalid: string[];
}

/** Replaces `${VAR}` / `${VAR:-fallback}` references in `input`; `$${` yields a literal `${`. */
export function interpolate(input: string, env: Record<string, string | undefined>): Interpolated {
  const missing: string[] = [];
  const invalid: string[] = [];
  const value = input.replace(REF_OR_ESCAPE, (match: string, body: string | undefined) => {
    if (body === undefined) return '${';
    const m = REF_BODY.exec(body);
    if (!m) {
      invalid.push(match);
      return match;
    }
    const name = m[1]!;
    const fallback = m[2];
    const v = env[name];
    if (v !== undefined && (fallback === undefined || v !== '')) return v;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { value, missing, invalid };
}

/** What the resolver needs to know about the YAML scalar at a path (quoted or plain). */
export type ScalarStyleLookup = (path: ConfigPath) => 'plain' | 'quoted' | 'unknown';

/** Converts the resolved text of a plain whole-reference scalar to a boolean or number when it reads as one. */
function retype(text: string): unknown {
  if (text.trim() === '') return text;
  try {
    const v: unknown = parseYamlScalar(text);
    return typeof v === 'boolean' || typeof v === 'number' ? v : text;
  } catch {
    return text;
  }
}

interface Scope {
  /** The integration this value sits in, if any. */
  integration: { name: string; enabled: boolean } | null;
}

/**
 * Resolves environment references and applies the secret rule over a plain value (objects, arrays,
 * scalars). Returns the new value and the issues found; never throws.
 */
export function resolveEnvironment(
  root: unknown,
  env: Record<string, string | undefined>,
  styleOf: ScalarStyleLookup,
): { value: unknown; issues: InterpolationIssue[] } {
  const issues: InterpolationIssue[] = [];
  const DROP = Symbol('drop');

  const resolveString = (s: string, path: ConfigPath, scope: Scope, secretKey: boolean): unknown => {
    if (secretKey) {
      const m = WHOLE_REF.exec(s);
      if (!m) {
        issues.push({ path, message: 'secret values must come from the environment: write ${VAR}' });
        return DROP;
      }
      const v = env[m[1]!];
      if (v === undefined) {
        if (scope.integration && !scope.integration.enabled) return DROP;
        issues.push({ path, message: missingMessage([m[1]!], scope) });
        return DROP;
      }
      return v;
    }
    if (!s.includes('${')) return s;
    const r = interpolate(s, env);
    if (r.invalid.length > 0) {
      issues.push({ path, message: `invalid environment reference ${r.invalid[0]} (write \${NAME} or \${NAME:-fallback})` });
      return DROP;
    }
    if (r.missing.length > 0) {
      if (scope.integration && !scope.integration.enabled) return DROP;
      issues.push({ path, message: missingMessage(r.missing, scope) });
      return DROP;
    }
    if (/^\$\{[^}]*\}$/.test(s) && styleOf(path) === 'plain') return retype(r.value);
    return r.value;
  };

  const visit = (value: unknown, path: ConfigPath, scope: Scope): unknown => {
    const last = path[path.length - 1];
    const secretKey = typeof last === 'string' && !isFreeFormEntry(path) && isSecretKey(last);
    if (typeof value === 'string') return resolveString(value, path, scope, secretKey);
    if (typeof value === 'number' || typeof value === 'boolean') {
      if (secretKey) {
        issues.push({ path, message: 'secret values must come from the environment: write ${VAR}' });
        return DROP;
      }
      return value;
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      value.forEach((item, i) => {
        const v = visit(item, [...path, i], scope);
        if (v !== DROP) out.push(v);
      });
      return out;
    }
    if (value !== null && typeof value === 'object') {
      const obj = value as Record<string, unknown>;
      let inner = scope;
      if (path.length === 2 && path[0] === 'integrations' && typeof path[1] === 'string') {
        // Decide first whether the integration is enabled: it governs how unset variables are treated.
        let enabled = obj['enabled'];
        if (typeof enabled === 'string') {
          enabled = resolveString(enabled, [...path, 'enabled'], { integration: null }, false);
        }
        inner = { integration: { name: path[1], enabled: enabled === true } };
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(obj)) {
        if (v === null || v === undefined) continue; // `key:` with no value = absent
        const childPath = [...path, k];
        const r = inner !== scope && k === 'enabled' && typeof v === 'string'
          ? resolveString(v, childPath, { integration: null }, false)
          : visit(v, childPath, inner);
        if (r !== DROP) out[k] = r;
      }
      return out;
    }
    return value;
  };

  const value = visit(root, [], { integration: null });
  return { value: value === DROP ? undefined : value, issues: dedupe(issues) };
}

function missingMessage(names: string[], scope: Scope): string {
  const list = names.join(', ');
  const verb = names.length === 1 ? 'is' : 'are';
  const where = scope.integration ? ` (integration "${scope.integration.name}" is enabled)` : '';
  return `environment variable${names.length === 1 ? '' : 's'} ${list} ${verb} not set${where}`;
}

function dedupe(issues: InterpolationIssue[]): InterpolationIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = JSON.stringify(i.path) + i.message;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
