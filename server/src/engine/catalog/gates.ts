/**
 * The 21 quality gates of the Review phase (design/gates.md), in order, with their thresholds per
 * scope and the rules that move a threshold: stricter after failed reviews, the tier's token budget,
 * and the 90% coverage of incident-fix pull requests (contract, "Source-hosting app integration").
 *
 * Numeric gates are of two kinds (`scaling`):
 * - quality bars (confidence, coverage, complexity, change-size, destructive-change) get stricter from
 *   demo to production and after failed reviews;
 * - budgets (phase-latency, cost-budget) are ceilings that grow with the scope's thoroughness and are
 *   not tightened after failures (a smaller budget does not make the next attempt better).
 * The other 14 gates are pass/fail: `unit`, `comparison`, `scaling` and thresholds are null.
 */
import { EngineError } from '../errors';
import type { IntelligenceTier, Scope } from './enums';
import { tokenBudgetFactor } from './products';
import { CATALOG_FILES, GatesFileSchema, parseCatalogFile, type GateDef, type GateInput } from './schema';

const PASS_FAIL = {
  unit: null,
  comparison: null,
  scaling: null,
  thresholds: { demo: null, poc: null, mvp: null, product: null, production: null },
  strictLimit: null,
} as const;

const RAW_GATES = [
  // ------------------------------------------------------------------ safety
  { number: 1, id: 'acmf-permission', category: 'safety', check: 'acmfPermission', ...PASS_FAIL,
    description: "Every action of the step is allowed by the agent's ACMF mode, or an approval for it is recorded." },
  { number: 2, id: 'scope-boundary', category: 'safety', check: 'scopeBoundary', ...PASS_FAIL,
    description: "Every path read or written lies inside the task's source / workspace (no traversal, no symlink escape)." },
  { number: 3, id: 'secrets-clean', category: 'safety', check: 'secretsClean', ...PASS_FAIL,
    description: 'The artifact (code, diff, report, PR body) contains no secret by the security-ai rules.' },
  { number: 4, id: 'destructive-change', category: 'safety', check: 'destructiveChange',
    description: "No file deletion, history rewrite or force push beyond the scope's limit without approval. The threshold is the number of file deletions allowed without approval; a history rewrite or force push always needs approval.",
    unit: 'count', comparison: 'max', scaling: 'quality',
    thresholds: { demo: 50, poc: 20, mvp: 5, product: 0, production: 0 }, strictLimit: 0 },
  { number: 5, id: 'protected-paths', category: 'safety', check: 'protectedPaths', ...PASS_FAIL,
    description: 'No change to paths listed in approval_required_for (e.g. CI workflows, infrastructure, lock files) without approval.' },
  { number: 6, id: 'rollback-ready', category: 'safety', check: 'rollbackReady', ...PASS_FAIL,
    description: 'A rollback plan exists for any change (a branch, a snapshot or a revert commit reference).' },
  // ------------------------------------------------------------------ correctness
  { number: 7, id: 'artifact-schema', category: 'correctness', check: 'artifactSchema', ...PASS_FAIL,
    description: "The artifact matches the agent's declared output schema." },
  { number: 8, id: 'confidence', category: 'correctness', check: 'confidence',
    description: "The Generate confidence is at least the scope's threshold.",
    unit: 'ratio', comparison: 'min', scaling: 'quality',
    thresholds: { demo: 0.3, poc: 0.5, mvp: 0.6, product: 0.75, production: 0.85 }, strictLimit: 1 },
  { number: 9, id: 'syntax-valid', category: 'correctness', check: 'syntaxValid', ...PASS_FAIL,
    description: 'Every generated or changed source file parses.' },
  { number: 10, id: 'tests-pass', category: 'correctness', check: 'testsPass', ...PASS_FAIL,
    description: 'The tests that the step ran passed (not_applicable when the step ran none).' },
  { number: 11, id: 'goal-trace', category: 'correctness', check: 'goalTrace', ...PASS_FAIL,
    description: "The artifact refers back to the task's goal (the goal context every agent receives)." },
  { number: 12, id: 'no-regression', category: 'correctness', check: 'noRegression', ...PASS_FAIL,
    description: 'Findings after the change are not more, nor more severe, than before it.' },
  // ------------------------------------------------------------------ performance
  { number: 13, id: 'phase-latency', category: 'performance', check: 'phaseLatency',
    description: 'Each phase finished within its time budget for the scope (the threshold applies to every phase separately).',
    unit: 'ms', comparison: 'max', scaling: 'budget',
    thresholds: { demo: 120_000, poc: 180_000, mvp: 300_000, product: 450_000, production: 600_000 }, strictLimit: null },
  { number: 14, id: 'cost-budget', category: 'performance', check: 'costBudget',
    description: "Model tokens of the step stayed within the tier's budget: the scope's threshold times the intelligence tier's token factor (0 tokens when no model was used).",
    unit: 'tokens', comparison: 'max', scaling: 'budget',
    thresholds: { demo: 50_000, poc: 100_000, mvp: 200_000, product: 300_000, production: 400_000 }, strictLimit: null },
  { number: 15, id: 'change-size', category: 'performance', check: 'changeSize',
    description: "The diff or artifact is within the scope's size limit (lines added plus lines deleted).",
    unit: 'lines', comparison: 'max', scaling: 'quality',
    thresholds: { demo: 5000, poc: 2000, mvp: 1000, product: 600, production: 400 }, strictLimit: 100 },
  { number: 16, id: 'complexity', category: 'performance', check: 'complexity',
    description: "No changed function exceeds the scope's cyclomatic-complexity limit.",
    unit: 'cyclomatic', comparison: 'max', scaling: 'quality',
    thresholds: { demo: 30, poc: 25, mvp: 20, product: 15, production: 10 }, strictLimit: 5 },
  // ------------------------------------------------------------------ compliance
  { number: 17, id: 'audit-complete', category: 'compliance', check: 'auditComplete', ...PASS_FAIL,
    description: 'All five phases of the step are in the audit trail, hash chain intact.' },
  { number: 18, id: 'license-policy', category: 'compliance', check: 'licensePolicy', ...PASS_FAIL,
    description: 'No dependency with a disallowed license is introduced.' },
  { number: 19, id: 'policy-as-code', category: 'compliance', check: 'policyAsCode', ...PASS_FAIL,
    description: "The organisation's policies (policy-ai rules in the config) pass." },
  { number: 20, id: 'coverage', category: 'compliance', check: 'coverage',
    description: "Test coverage is at least the scope's threshold (90% for incident-fix pull requests).",
    unit: 'percent', comparison: 'min', scaling: 'quality',
    thresholds: { demo: 0, poc: 40, mvp: 60, product: 75, production: 90 }, strictLimit: 100 },
  { number: 21, id: 'approval-recorded', category: 'compliance', check: 'approvalRecorded', ...PASS_FAIL,
    description: 'Every human approval that the ACMF mode requires is present, with who and when.' },
] as const satisfies readonly GateInput[];

/** Id of one of the 21 gates. */
export type GateId = (typeof RAW_GATES)[number]['id'];
/** Evaluator key of a gate: `evaluators satisfies Record<GateCheck, GateEvaluator>`. */
export type GateCheck = (typeof RAW_GATES)[number]['check'];

/** The 21 gates in gates.md order (the order Review evaluates them). */
export const GATES: readonly GateDef[] = parseCatalogFile(CATALOG_FILES.gates, GatesFileSchema, RAW_GATES);

/** Contract: pull requests from incident fixes need 90% test coverage. */
export const INCIDENT_FIX_COVERAGE = 90;
/**
 * Failed reviews beyond this many do not tighten further: the bound of "stricter after failures".
 * Two steps keep a struggling agent passable (mvp confidence 0.6 -> at most 0.676, complexity 20 ->
 * at most 12); a passed review resets the count to zero (acmf-service recordOutcome), so the
 * adjustment decays with the first success. docs/decisions.md, "Stricter after failures".
 */
export const MAX_ADJUSTMENT_STEPS = 2;
/** A `min` quality gate rises by this share of its remaining headroom per recent failure. */
export const MIN_GATE_HEADROOM_STEP = 0.1;
/** A `max` quality gate is multiplied by this factor per recent failure. */
export const MAX_GATE_FACTOR = 0.8;

/** The gate with `id`; undefined when there is none. */
export function findGate(id: string): GateDef | undefined {
  return GATES.find((g) => g.id === id);
}

function gateById(id: GateId): GateDef {
  const gate = findGate(id);
  // Unreachable: GateId is derived from the data.
  if (gate === undefined) throw new EngineError('ERR_INTERNAL', `gate ${id} missing from the catalog`);
  return gate;
}

function clampFailures(recentFailures: number): number {
  if (!Number.isFinite(recentFailures) || recentFailures <= 0) return 0;
  return Math.min(Math.floor(recentFailures), MAX_ADJUSTMENT_STEPS);
}

/** Decimal places kept per unit; integer units round toward the stricter side. */
const DECIMALS: Readonly<Record<string, number>> = { ratio: 4, percent: 2 };

function roundStricter(value: number, unit: string | null, comparison: 'min' | 'max'): number {
  const places = unit === null ? 0 : (DECIMALS[unit] ?? 0);
  const scale = 10 ** places;
  const scaled = value * scale;
  // The epsilon keeps float noise (8650.000000000001) from adding a whole step.
  const rounded = comparison === 'min' ? Math.ceil(scaled - 1e-9) : Math.floor(scaled + 1e-9);
  return rounded / scale;
}

/**
 * The threshold of `gate` at `scope` after `recentFailures` failed reviews of the agent (stricter
 * after failure). Quality `min` gates rise by 10% of the headroom to `strictLimit` per failure
 * (t' = L - (L - t) * 0.9^n); quality `max` gates shrink by 20% per failure (t' = t * 0.8^n), never
 * below `strictLimit`. Failures count up to MAX_ADJUSTMENT_STEPS. Budget gates keep their scope
 * threshold; pass/fail gates return null.
 */
export function adjustedThreshold(gate: GateDef, scope: Scope, recentFailures: number): number | null {
  const base = gate.thresholds[scope];
  const n = clampFailures(recentFailures);
  if (base === null || n === 0 || gate.scaling !== 'quality' || gate.strictLimit === null || gate.comparison === null) return base;
  const limit = gate.strictLimit;
  if (gate.comparison === 'min') {
    if (base >= limit) return base;
    const raised = roundStricter(limit - (limit - base) * (1 - MIN_GATE_HEADROOM_STEP) ** n, gate.unit, 'min');
    return Math.min(limit, Math.max(base, raised));
  }
  if (base <= limit) return base;
  const lowered = roundStricter(base * MAX_GATE_FACTOR ** n, gate.unit, 'max');
  return Math.max(limit, Math.min(base, lowered));
}

/** Coverage threshold in percent: the scope's (after failures), and at least 90 for an incident fix. */
export function coverageThresholdFor(scope: Scope, opts: { incidentFix?: boolean; recentFailures?: number } = {}): number {
  const adjusted = adjustedThreshold(gateById('coverage'), scope, opts.recentFailures ?? 0) ?? 0;
  return opts.incidentFix === true ? Math.max(adjusted, INCIDENT_FIX_COVERAGE) : adjusted;
}

/** Everything that moves a threshold. */
export interface ThresholdContext {
  scope: Scope;
  /** Intelligence tier of the execution (scales token budgets); default core. */
  tier?: IntelligenceTier;
  /** The agent's failed reviews since its last passed one. */
  recentFailures?: number;
  /** The step produces a pull request that fixes an incident. */
  incidentFix?: boolean;
}

/**
 * The threshold a gate is held against: scope threshold, stricter after failures (quality gates),
 * times the tier's token factor (token budgets), at least 90% coverage for incident fixes.
 * Null for pass/fail gates.
 */
export function effectiveThreshold(gate: GateDef, ctx: ThresholdContext): number | null {
  const adjusted = adjustedThreshold(gate, ctx.scope, ctx.recentFailures ?? 0);
  if (adjusted === null) return null;
  if (gate.unit === 'tokens') return adjusted * tokenBudgetFactor(ctx.tier ?? 'core');
  if (gate.id === 'coverage' && ctx.incidentFix === true) return Math.max(adjusted, INCIDENT_FIX_COVERAGE);
  return adjusted;
}

/** True when a measured value satisfies a numeric gate's threshold (`min`: >=, `max`: <=). */
export function meetsThreshold(gate: GateDef, value: number, threshold: number): boolean {
  if (gate.comparison === 'min') return value >= threshold;
  if (gate.comparison === 'max') return value <= threshold;
  throw new EngineError('ERR_INTERNAL', `gate ${gate.id} is pass/fail and has no threshold`);
}
