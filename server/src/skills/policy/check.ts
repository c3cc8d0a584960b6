/**
 * policy-ai `check`: the deployment configurations of a workspace (Kubernetes manifests, Helm-rendered
 * output, Dockerfiles, Compose files) against the baseline (rules.ts) and the config's rules, with
 * the config's waivers and disabled rules applied and the request's filters (rules, severity).
 *
 * Pure over texts (`checkTexts`), so enforce re-checks its edited texts with the same code; the
 * workspace walk is `collectFiles`.
 */
import * as path from 'node:path';
import { isMap, isScalar, parseDocument } from 'yaml';
import { matchesGlob } from '../../engine/acmf/risk';
import { isDockerfile } from '../security/iac';
import { isYamlFile } from '../security/k8s';
import { child } from '../security/k8s-yaml';
import { WorkspaceFiles, walkFiles } from '../workspace/files';
import { checkCustom, parsePolicyPath, type CustomRule } from './custom';
import { checkCompose, checkDockerfile, isCompose, isComposeFileName } from './docker-compose';
import { checkKubernetes, isKubernetesObject, type FixValues } from './kubernetes';
import type { FileProblem, Violation, Waived } from './model';
import { BASELINE_RULES, SEVERITY_RANK, type PolicySeverity } from './rules';
import { parseYamlFile, type ParsedYaml } from './yaml-file';

export interface PolicySettings {
  rules: CustomRule[];
  waivers: Array<{ rule: string; file?: string; object?: string; reason: string }>;
  disable: string[];
  enforce: FixValues;
}

export const EMPTY_SETTINGS: PolicySettings = { rules: [], waivers: [], disable: [], enforce: { limits: {}, digests: {} } };

export interface CheckFilters {
  /** Rule ids, or prefixes ending in "." or "*" (k8s., k8s.image-*). */
  rules?: string[];
  /** Only violations at or above this severity. */
  severity?: PolicySeverity;
}

export interface RuleState {
  id: string;
  severity: PolicySeverity;
  origin: 'baseline' | 'config';
  state: 'on' | 'disabled' | 'filtered';
}

export interface CheckReport {
  violations: Violation[];
  waived: Waived[];
  problems: FileProblem[];
  examined: { kubernetes: string[]; dockerfiles: string[]; compose: string[]; objects: number };
  rules: RuleState[];
  counts: { violations: number; waived: number; bySeverity: Record<PolicySeverity, number>; byRule: Record<string, number> };
  notes: string[];
}

export interface SourceFile { file: string; text: string }

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.next', '.cache', 'vendor', 'target', '.venv', 'venv', '__pycache__', '.cadre']);
const MAX_BYTES = 2 * 1024 * 1024;
const MAX_FILES = 5000;

/** Files a check looks at: YAML and Dockerfiles, under the given paths (default the workspace). */
export function collectFiles(workspace: string, paths: readonly string[] | undefined): { files: SourceFile[]; refused: string[]; problem?: string } {
  const ws = new WorkspaceFiles(workspace);
  const rels: string[] = [];
  const refused: string[] = [];
  const wanted = (rel: string) => isYamlFile(rel) || isDockerfile(rel);
  for (const given of paths && paths.length ? paths : ['.']) {
    const r = ws.resolve(given);
    if (!r.ok) {
      if (paths?.length) return { files: [], refused, problem: `input.paths: ${given} ${r.reason === 'not found' ? 'does not exist in the workspace' : `is ${r.reason}; not read`}` };
      continue;
    }
    if (ws.isFile(given)) { rels.push(r.rel); continue; }
    const under = walkFiles(r.real, { skipDirs: SKIP_DIRS, limit: MAX_FILES, onSkip: (rel, why) => { if (why !== 'not a file') refused.push(`${rel}: ${why}, not read`); } });
    for (const f of under) if (wanted(f)) rels.push(r.rel ? `${r.rel}/${f}` : f);
  }
  const files: SourceFile[] = [];
  for (const rel of [...new Set(rels)].sort()) {
    const t = ws.readText(rel, MAX_BYTES);
    if (t.ok) files.push({ file: t.rel || rel, text: t.text });
    else if (t.reason !== 'not found') refused.push(`${rel}: ${t.reason}, not read`);
  }
  return { files, refused };
}

function ruleSelected(id: string, filter: string[] | undefined): boolean {
  if (!filter?.length) return true;
  return filter.some((f) => f === id || ((f.endsWith('.') || f.endsWith('*')) && id.startsWith(f.replace(/\*$/, ''))));
}

function waiverFor(v: Violation, waivers: PolicySettings['waivers']): PolicySettings['waivers'][number] | undefined {
  return waivers.find((w) => w.rule === v.rule && (w.file === undefined || matchesGlob(v.file, w.file)) && (w.object === undefined || w.object === v.object));
}

/** Rules of the run with their state; unknown ids in disable / filters become notes. */
export function ruleStates(settings: PolicySettings, filters: CheckFilters): { states: RuleState[]; notes: string[] } {
  const notes: string[] = [];
  const disabled = new Set(settings.disable);
  const all = [
    ...BASELINE_RULES.map((r) => ({ id: r.id, severity: r.severity, origin: 'baseline' as const })),
    ...settings.rules.map((r) => ({ id: r.id, severity: r.severity, origin: 'config' as const })),
  ];
  for (const d of disabled) if (!BASELINE_RULES.some((r) => r.id === d)) notes.push(`policy.disable names "${d}", which is no baseline rule: ignored (configured rules are removed from policy.rules instead)`);
  for (const f of filters.rules ?? []) if (!all.some((r) => ruleSelected(r.id, [f]))) notes.push(`input.ruleIds names "${f}", which matches no rule`);
  const min = filters.severity ? SEVERITY_RANK[filters.severity] : 0;
  const states = all.map((r) => ({
    ...r,
    state: r.origin === 'baseline' && disabled.has(r.id) ? 'disabled' as const
      : !ruleSelected(r.id, filters.rules) || SEVERITY_RANK[r.severity] < min ? 'filtered' as const : 'on' as const,
  }));
  return { states, notes };
}

export interface CheckedFile { file: string; text: string; yaml?: ParsedYaml; type: 'kubernetes' | 'compose' | 'dockerfile' | null }

/** Checks texts; `violations` keep their fix ops (enforce uses them; the report strips them). */
export function checkTexts(files: readonly SourceFile[], settings: PolicySettings, filters: CheckFilters = {}): { report: CheckReport; checked: CheckedFile[] } {
  const { states, notes } = ruleStates(settings, filters);
  const on = new Set(states.filter((s) => s.state === 'on').map((s) => s.id));
  const customRules = settings.rules.filter((r) => on.has(r.id));
  const report: CheckReport = {
    violations: [], waived: [], problems: [], examined: { kubernetes: [], dockerfiles: [], compose: [], objects: 0 }, rules: states,
    counts: { violations: 0, waived: 0, bySeverity: { critical: 0, high: 0, medium: 0, low: 0 }, byRule: {} }, notes,
  };
  const checked: CheckedFile[] = [];
  const found: Violation[] = [];
  const patches = kustomizePatches(files);
  for (const f of files) {
    if (patches.has(f.file)) {
      report.problems.push({ file: f.file, line: null, message: `a Kustomize patch of ${patches.get(f.file)} (a partial object): not judged; check the output of \`kustomize build\` instead` });
      continue;
    }
    if (isDockerfile(f.file)) {
      report.examined.dockerfiles.push(f.file);
      found.push(...checkDockerfile(f.file, f.text, settings.enforce));
      checked.push({ ...f, type: 'dockerfile' });
      continue;
    }
    if (!isYamlFile(f.file)) continue;
    // A YAML file with neither a `kind:` nor a `services:` key is not a deployment configuration (CI files, OpenAPI documents).
    if (!/^\s*(kind|services)\s*:/m.test(f.text) && !isComposeFileName(f.file)) continue;
    const p = parseYamlFile(f.file, f.text);
    if (isCompose(p)) {
      report.examined.compose.push(f.file);
      report.problems.push(...p.problems);
      const r = checkCompose(p, settings.enforce);
      report.examined.objects += r.services;
      found.push(...r.violations);
      const services = child(p.docs[0]?.contents, 'services');
      if (isMap(services)) {
        for (const pair of services.items) {
          const name = String(isScalar(pair.key) ? pair.key.value : pair.key);
          if (isMap(pair.value)) found.push(...checkCustom(customRules, { p, root: pair.value, kind: 'ComposeService', name, object: `service ${name}`, source: null }));
        }
      }
      checked.push({ ...f, yaml: p, type: 'compose' });
      continue;
    }
    const k8s = p.objects.filter(isKubernetesObject);
    if (!k8s.length && !p.problems.length) continue;
    report.examined.kubernetes.push(f.file);
    report.problems.push(...p.problems);
    report.examined.objects += k8s.length;
    found.push(...checkKubernetes(p, settings.enforce).violations);
    for (const o of k8s) found.push(...checkCustom(customRules, { p, root: o.root, kind: o.kind!, name: o.name, object: `${o.kind}/${o.name ?? `document-${o.doc + 1}`}`, source: o.source }));
    checked.push({ ...f, yaml: p, type: 'kubernetes' });
  }
  for (const v of found) {
    if (!on.has(v.rule)) continue;
    const w = waiverFor(v, settings.waivers);
    if (w) { report.waived.push({ ...v, waiver: { reason: w.reason, ...(w.file ? { file: w.file } : {}), ...(w.object ? { object: w.object } : {}) } }); continue; }
    report.violations.push(v);
  }
  const order = (a: Violation, b: Violation) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule) || (a.container ?? '').localeCompare(b.container ?? '');
  report.violations.sort(order);
  report.waived.sort(order);
  report.counts.violations = report.violations.length;
  report.counts.waived = report.waived.length;
  for (const v of report.violations) {
    report.counts.bySeverity[v.severity]++;
    report.counts.byRule[v.rule] = (report.counts.byRule[v.rule] ?? 0) + 1;
  }
  return { report, checked };
}

/**
 * Files a kustomization.yaml names as patches (`patchesStrategicMerge`, `patches[].path`): partial
 * objects that would raise every "missing" rule; judged only once built.
 */
function kustomizePatches(files: readonly SourceFile[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    if (!/(^|\/)kustomization\.ya?ml$/.test(f.file)) continue;
    let doc: unknown;
    try { doc = parseDocument(f.text).toJS(); } catch { continue; }
    if (!doc || typeof doc !== 'object') continue;
    const k = doc as { patchesStrategicMerge?: unknown; patches?: unknown };
    const named = [
      ...(Array.isArray(k.patchesStrategicMerge) ? k.patchesStrategicMerge : []),
      ...(Array.isArray(k.patches) ? k.patches.map((x) => (x && typeof x === 'object' ? (x as { path?: unknown }).path : undefined)) : []),
    ].filter((x): x is string => typeof x === 'string' && !x.includes('\n'));
    const dir = path.posix.dirname(f.file);
    for (const n of named) out.set(path.posix.normalize(dir === '.' ? n : `${dir}/${n}`), f.file);
  }
  return out;
}

/** A report without the internal fix edits (what leaves the step). */
export function publicReport(r: CheckReport): CheckReport {
  const strip = <T extends Violation>(v: T): T => { const { ops: _ops, ...rest } = v; return rest as T; };
  return { ...r, violations: r.violations.map(strip), waived: r.waived.map(strip) };
}

/** Reads `input.settings` (the engine's copy of the config's `policy` section); bad settings say why. */
export function readSettings(raw: unknown): PolicySettings | { error: string } {
  if (raw === undefined || raw === null) return EMPTY_SETTINGS;
  if (typeof raw !== 'object') return { error: 'input.settings is not an object' };
  const s = raw as Partial<Record<keyof PolicySettings, unknown>>;
  const rules = Array.isArray(s.rules) ? (s.rules as CustomRule[]) : [];
  for (const r of rules) {
    try { parsePolicyPath(r.path); } catch (e) { return { error: `policy.rules ${r.id}: ${(e as Error).message}` }; }
  }
  const enforce = (s.enforce ?? {}) as Partial<FixValues>;
  return {
    rules,
    waivers: Array.isArray(s.waivers) ? (s.waivers as PolicySettings['waivers']) : [],
    disable: Array.isArray(s.disable) ? (s.disable as string[]).map(String) : [],
    enforce: { limits: { ...(enforce.limits ?? {}) }, digests: { ...(enforce.digests ?? {}) } },
  };
}
