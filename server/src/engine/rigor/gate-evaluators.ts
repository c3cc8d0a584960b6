/**
 * One evaluator per gate of gates.md, keyed by the catalog's `check` key. Each returns pass, fail
 * or not_applicable with the measured value and a reason; a gate it cannot evaluate fails.
 *
 * Gates judge the step's own work, never the user's code it was asked to look at (gates.md):
 * complexity, change-size, no-regression, tests-pass and coverage apply only to a step that changed
 * (or proposed changes to) code; what a review, a test run or a scan found in existing code are
 * findings of the artifact, not gate failures.
 */
import type { GateStatus } from '../../../../protocol/events';
import { PHASES } from '../../../../protocol/events';
import type { ReviewSubject } from './review-subject';
import { DELETE_KINDS, HISTORY_REWRITE_KINDS, isMutatingKind } from '../catalog/action-kinds';

export interface GateOutcome {
  status: GateStatus;
  value: number | string | boolean | null;
  reason: string;
}

export type GateEvaluator = (subject: ReviewSubject, threshold: number | null) => GateOutcome;

const pass = (value: GateOutcome['value'], reason: string): GateOutcome => ({ status: 'pass', value, reason });
const fail = (value: GateOutcome['value'], reason: string): GateOutcome => ({ status: 'fail', value, reason });
const notApplicable = (reason: string): GateOutcome => ({ status: 'not_applicable', value: null, reason });

/** The step's own code changes (written or proposed): what the code-quality gates judge. */
function ownChanges(s: ReviewSubject): NonNullable<ReviewSubject['artifact']['changes']> {
  return s.artifact.changes ?? [];
}

const NOT_OWN_CODE = 'the step changed no code (what it measured in existing code is a finding, not its own work)';

/**
 * Whether an action declared in Inspect covers one the step reports as taken: the same kind, over the
 * paths actually touched. A declaration that named paths covers exactly those paths; one that named
 * none (the skill could not know them before Generate, e.g. code a model writes) covers the kind
 * anywhere inside the workspace, which the scope-boundary gate holds the step to. The descriptions
 * do not matter: a skill reports what it did in its own words.
 */
function covers(declared: { kind: string; paths?: string[] }, taken: { kind: string; paths?: string[] }): boolean {
  if (declared.kind !== taken.kind) return false;
  const dp = declared.paths ?? [];
  if (dp.length === 0) return true;
  return (taken.paths ?? []).every((p) => dp.includes(p));
}

function approved(d: ReviewSubject['decisions'][number]): boolean {
  return d.approval?.status === 'approved';
}

function changedPaths(s: ReviewSubject): string[] {
  return [...(s.artifact.changes ?? []).map((c) => c.path), ...(s.artifact.pathsWritten ?? [])];
}

function limit(threshold: number | null, name: string): number {
  if (threshold === null) throw new Error(`gate ${name} needs a numeric threshold`);
  return threshold;
}

function atMost(value: number, threshold: number | null, name: string, unit: string): GateOutcome {
  const max = limit(threshold, name);
  return value <= max ? pass(value, `${value} ${unit} <= ${max}`) : fail(value, `${value} ${unit} exceeds the limit of ${max}`);
}

function atLeast(value: number, threshold: number | null, name: string, unit: string): GateOutcome {
  const min = limit(threshold, name);
  return value >= min ? pass(value, `${value}${unit} >= ${min}${unit}`) : fail(value, `${value}${unit} is below the required ${min}${unit}`);
}

export const GATE_EVALUATORS = {
  acmfPermission(s) {
    const taken = s.artifact.actionsTaken ?? [];
    const coveredBy = (a: (typeof taken)[number]) => s.decisions.filter((d) => covers(d.action, a));
    const denied = taken.flatMap((a) => {
      const ds = coveredBy(a);
      return ds.length > 0 && !ds.some((d) => d.decision === 'allow' || approved(d)) ? [{ a, decision: ds[0]!.decision }] : [];
    });
    const unplanned = taken.filter((a) => isMutatingKind(a.kind) && coveredBy(a).length === 0);
    const bad = denied.length + unplanned.length;
    if (bad === 0) return pass(0, `${taken.length} action(s) taken, all allowed by the ACMF mode or approved`);
    const what = [...denied.map(({ a, decision }) => `${a.kind} (${decision})`), ...unplanned.map((a) => `${a.kind} (not declared in Inspect)`)];
    return fail(bad, `actions without permission: ${what.join(', ')}`);
  },

  scopeBoundary(s) {
    const paths = [...s.evidence.pathsRead, ...changedPaths(s)];
    if (paths.length === 0) return pass(0, 'the step touched no path');
    const ws = s.request.workspace;
    if (!ws) return fail(paths.length, `the step touched ${paths.length} path(s) but has no workspace to hold them to`);
    const outside = paths.filter((p) => !s.checks.insideWorkspace(ws, p));
    return outside.length === 0 ? pass(0, `${paths.length} path(s), all inside ${ws}`) : fail(outside.length, `outside the workspace: ${outside.slice(0, 5).join(', ')}`);
  },

  secretsClean(s) {
    // The structured data leaves the step too (store, API, SARIF): its strings are checked like the report.
    const texts = [s.artifact.text ?? '', s.artifact.summary, ...(s.artifact.changes ?? []).map((c) => c.content ?? ''), ...stringLeaves(s.artifact.data)];
    const found = texts.flatMap((t) => (t ? s.checks.secrets(t) : []));
    return found.length === 0 ? pass(0, 'no secret found in the artifact') : fail(found.length, `secrets found: ${[...new Set(found)].join(', ')}`);
  },

  destructiveChange(s, threshold) {
    const max = limit(threshold, 'destructive-change');
    const acted = [...s.decisions.map((d) => ({ kind: d.action.kind, ok: approved(d) })), ...(s.artifact.actionsTaken ?? []).map((a) => ({ kind: a.kind, ok: s.decisions.some((d) => d.action.kind === a.kind && approved(d)) }))];
    const rewrites = acted.filter((a) => HISTORY_REWRITE_KINDS.has(a.kind) && !a.ok);
    if (rewrites.length > 0) return fail(rewrites.length, `history rewrite or force push without approval (${[...new Set(rewrites.map((r) => r.kind))].join(', ')})`);
    const deletions = (s.artifact.changes ?? []).filter((c) => c.kind === 'delete').length;
    const deletionApproved = s.decisions.some((d) => DELETE_KINDS.has(d.action.kind) && approved(d));
    if (deletions > max && !deletionApproved) return fail(deletions, `${deletions} file deletion(s) exceed the limit of ${max} without approval`);
    return pass(deletions, `${deletions} deletion(s)${deletionApproved ? ', approved' : `, limit ${max} without approval`}`);
  },

  protectedPaths(s) {
    const touched = changedPaths(s).filter((p) => s.protectedPaths.some((g) => s.checks.matchesGlob(p, g)));
    if (touched.length === 0) return pass(0, 'no protected path changed');
    const covered = touched.filter((p) => s.decisions.some((d) => approved(d) && (d.action.paths ?? []).includes(p)));
    const missing = touched.filter((p) => !covered.includes(p));
    return missing.length === 0 ? pass(touched.length, `protected path(s) changed with approval: ${touched.join(', ')}`) : fail(missing.length, `protected path(s) changed without approval: ${missing.join(', ')}`);
  },

  rollbackReady(s) {
    // A change the step only proposed (applied: false, a diff) wrote nothing: there is nothing to roll back.
    const all = s.artifact.changes ?? [];
    const applied = all.filter((c) => c.applied !== false).length;
    // A command run is not a change of the workspace when the skill proved it left the sources as they were (rollback `none_needed`).
    const changes = applied + (s.artifact.actionsTaken ?? []).filter((a) => isMutatingKind(a.kind) && !(a.kind === 'run_command' && s.artifact.rollback?.kind === 'none_needed')).length;
    if (changes === 0) return notApplicable(all.length > 0 ? `the step changed nothing (${all.length} change(s) only proposed, none written)` : 'the step changed nothing');
    const rb = s.artifact.rollback;
    return rb && rb.kind !== 'none_needed' && rb.ref ? pass(rb.ref, `rollback by ${rb.kind} ${rb.ref}`) : fail(null, 'the step changed something but declared no rollback (branch, snapshot or revert)');
  },

  artifactSchema(s) {
    const a = s.artifact;
    const base = typeof a.kind === 'string' && typeof a.summary === 'string' && typeof a.goalRef === 'string' && typeof a.confidence === 'number' && a.confidence >= 0 && a.confidence <= 1;
    if (!base) return fail(false, 'the artifact lacks kind, summary, goalRef or a confidence in 0..1');
    if (!s.outputSchema) return pass(true, 'base artifact schema (the skill declares no data schema)');
    const r = s.outputSchema.safeParse(a.data);
    return r.success ? pass(true, `data matches the ${s.request.agentId} ${s.request.action} schema`) : fail(false, `data does not match the declared schema: ${r.error.message.slice(0, 300)}`);
  },

  confidence(s, threshold) {
    return atLeast(Number(s.artifact.confidence.toFixed(3)), threshold, 'confidence', '');
  },

  syntaxValid(s) {
    const files = (s.artifact.changes ?? []).filter((c) => c.kind !== 'delete' && c.content !== undefined);
    if (files.length === 0) return notApplicable('no source file generated or changed');
    const problems: string[] = [];
    for (const f of files) {
      const r = s.checks.syntax(f.path, f.content ?? '');
      if (r === null) problems.push(`${f.path}: no parser for this language, cannot verify`);
      else if (!r.ok) problems.push(`${f.path}: ${r.reason}`);
    }
    return problems.length === 0 ? pass(files.length, `${files.length} file(s) parse`) : fail(problems.length, problems.join('; '));
  },

  testsPass(s) {
    const t = s.artifact.tests;
    // A test run that found failing tests is a correct result: the failures are its findings.
    if (ownChanges(s).filter((c) => c.applied !== false).length === 0) {
      return notApplicable(t && t.passed + t.failed > 0 ? `the step changed no code; its test run (${t.passed} passed, ${t.failed} failed) is a finding, not its own change` : 'the step changed no code');
    }
    if (!t || t.passed + t.failed === 0) return notApplicable('the step changed code but ran no tests (tester-ai tests the change)');
    const before = s.artifact.testsBefore;
    if (before) {
      const broke = t.failed - before.failed;
      return broke <= 0 ? pass(t.passed, `${t.passed} passed, ${t.failed} failed (${before.failed} failed before the change)`) : fail(broke, `the change broke ${broke} test(s): ${t.failed} fail, ${before.failed} failed before it`);
    }
    return t.failed === 0 ? pass(t.passed, `${t.passed} test(s) passed after the change`) : fail(t.failed, `${t.failed} of ${t.passed + t.failed} test(s) fail after the change (no run before it to compare with)`);
  },

  goalTrace(s) {
    return s.artifact.goalRef === s.request.goal.id
      ? pass(s.artifact.goalRef, `the artifact answers goal ${s.request.goal.id}`)
      : fail(s.artifact.goalRef, `the artifact refers to goal "${s.artifact.goalRef}", not to ${s.request.goal.id}`);
  },

  noRegression(s) {
    if (ownChanges(s).length === 0) return notApplicable(NOT_OWN_CODE);
    const { findingsBefore: b, findingsAfter: a } = s.artifact;
    if (!b || !a) return notApplicable('the step measured no findings before and after');
    return a.count <= b.count && a.maxSeverity <= b.maxSeverity
      ? pass(a.count, `${b.count} finding(s) before, ${a.count} after`)
      : fail(a.count, `findings rose from ${b.count} (max severity ${b.maxSeverity}) to ${a.count} (max severity ${a.maxSeverity})`);
  },

  phaseLatency(s, threshold) {
    const entries = Object.entries(s.phaseDurations) as Array<[string, number]>;
    const [slowest, ms] = entries.reduce<[string, number]>((m, e) => (e[1] > m[1] ? e : m), ['none', 0]);
    const max = limit(threshold, 'phase-latency');
    return ms <= max ? pass(ms, `slowest phase ${slowest} took ${ms} ms <= ${max} ms`) : fail(ms, `phase ${slowest} took ${ms} ms, budget ${max} ms`);
  },

  costBudget(s, threshold) {
    return atMost(s.artifact.tokens ?? 0, threshold, 'cost-budget', 'tokens');
  },

  changeSize(s, threshold) {
    const changes = s.artifact.changes ?? [];
    if (changes.length === 0) return notApplicable('no file changed');
    return atMost(changes.reduce((n, c) => n + c.linesAdded + c.linesRemoved, 0), threshold, 'change-size', 'changed lines');
  },

  complexity(s, threshold) {
    if (ownChanges(s).length === 0) return notApplicable(NOT_OWN_CODE);
    const c = s.artifact.complexity;
    if (!c) return notApplicable('no changed function was measured');
    const r = atMost(c.max, threshold, 'complexity', 'cyclomatic');
    return { ...r, reason: `${r.reason} (${c.where})` };
  },

  auditComplete(s) {
    const expected = PHASES.filter((p) => p !== 'Review');
    const missing = expected.filter((p) => !s.audit.recorded.includes(p));
    if (missing.length > 0) return fail(missing.length, `phases missing from the audit trail: ${missing.join(', ')}`);
    if (!s.audit.intact) return fail(false, `audit chain broken: ${s.audit.reason ?? 'unknown'}`);
    return pass(true, 'Research to Optimize recorded, Review in progress, hash chain intact');
  },

  licensePolicy(s) {
    const deps = s.artifact.dependenciesAdded ?? [];
    if (deps.length === 0) return notApplicable('no dependency introduced');
    const deny = new Set(s.deniedLicenses.map((l) => l.toLowerCase()));
    const bad = deps.filter((d) => !d.license || d.license.toUpperCase() === 'UNKNOWN' || deny.has(d.license.toLowerCase()));
    return bad.length === 0 ? pass(0, `${deps.length} dependenc(ies), licenses allowed`) : fail(bad.length, `disallowed or unknown license: ${bad.map((d) => `${d.name} (${d.license || 'none'})`).join(', ')}`);
  },

  policyAsCode(s) {
    if (s.policies.length === 0) return notApplicable('no policy configured');
    const paths = changedPaths(s);
    const lines = (s.artifact.changes ?? []).reduce((n, c) => n + c.linesAdded + c.linesRemoved, 0);
    const violations: string[] = [];
    for (const p of s.policies) {
      const hit = paths.find((path) => (p.deny_paths ?? []).some((g) => s.checks.matchesGlob(path, g)));
      if (hit) violations.push(`${p.id}: ${hit} is denied`);
      if (p.max_changed_lines !== undefined && lines > p.max_changed_lines) violations.push(`${p.id}: ${lines} changed lines > ${p.max_changed_lines}`);
    }
    return violations.length === 0 ? pass(0, `${s.policies.length} polic(ies) pass`) : fail(violations.length, violations.join('; '));
  },

  coverage(s, threshold) {
    if (ownChanges(s).length === 0) return notApplicable(s.artifact.coverage === undefined ? 'the step measured no coverage' : `${NOT_OWN_CODE}: line coverage ${s.artifact.coverage}%`);
    if (s.artifact.coverage === undefined) return notApplicable('the step measured no coverage');
    return atLeast(s.artifact.coverage, threshold, 'coverage', '%');
  },

  approvalRecorded(s) {
    const needed = s.decisions.filter((d) => d.decision === 'approval_required');
    if (needed.length === 0) return notApplicable('the ACMF mode required no approval');
    const missing = needed.filter((d) => !d.approval || d.approval.status === 'pending' || !d.approval.decidedBy || !d.approval.decidedAt);
    if (missing.length > 0) return fail(missing.length, `no recorded decision for: ${missing.map((d) => d.action.kind).join(', ')}`);
    return pass(needed.length, needed.map((d) => `${d.action.kind} ${d.approval?.status} by ${d.approval?.decidedBy} at ${d.approval?.decidedAt}`).join('; '));
  },
} satisfies Record<string, GateEvaluator>;

export type GateCheck = keyof typeof GATE_EVALUATORS;

/** Every string inside a JSON-like value (keys excluded), depth-first; bounded so a huge artifact stays cheap. */
function stringLeaves(value: unknown, out: string[] = [], budget = { n: 100_000 }): string[] {
  if (budget.n-- <= 0) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out, budget);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringLeaves(v, out, budget);
  return out;
}
