import assert from 'node:assert/strict';
import {
  adjustedThreshold,
  catalog,
  coverageThresholdFor,
  effectiveThreshold,
  findGate,
  GATES,
  INCIDENT_FIX_COVERAGE,
  MAX_ADJUSTMENT_STEPS,
  meetsThreshold,
  SCOPES,
  type GateDef,
} from '../../../server/src/engine/catalog';
import { GATE_EVALUATORS } from '../../../server/src/engine/rigor/gate-evaluators';

/** design/gates.md, in order: [id, category]. */
const GATES_MD: Array<[string, string]> = [
  ['acmf-permission', 'safety'],
  ['scope-boundary', 'safety'],
  ['secrets-clean', 'safety'],
  ['destructive-change', 'safety'],
  ['protected-paths', 'safety'],
  ['rollback-ready', 'safety'],
  ['artifact-schema', 'correctness'],
  ['confidence', 'correctness'],
  ['syntax-valid', 'correctness'],
  ['tests-pass', 'correctness'],
  ['goal-trace', 'correctness'],
  ['no-regression', 'correctness'],
  ['phase-latency', 'performance'],
  ['cost-budget', 'performance'],
  ['change-size', 'performance'],
  ['complexity', 'performance'],
  ['audit-complete', 'compliance'],
  ['license-policy', 'compliance'],
  ['policy-as-code', 'compliance'],
  ['coverage', 'compliance'],
  ['approval-recorded', 'compliance'],
];

/** Quality bars that must get stricter from demo to production. */
const QUALITY = ['destructive-change', 'confidence', 'change-size', 'complexity', 'coverage'];
/** Resource budgets that grow with the scope's thoroughness. */
const BUDGETS = ['phase-latency', 'cost-budget'];

const gate = (id: string): GateDef => {
  const g = findGate(id);
  assert.ok(g, id);
  return g;
};

/** True when threshold `b` is at least as strict as `a` for this gate. */
const atLeastAsStrict = (g: GateDef, a: number, b: number): boolean => (g.comparison === 'min' ? b >= a : b <= a);

describe('catalog: gates', () => {
  it('has the 21 gates of gates.md with unique ids, in order, numbered 1..21', () => {
    assert.deepEqual(GATES.map((g) => [g.id, g.category]), GATES_MD);
    assert.deepEqual(GATES.map((g) => g.number), GATES_MD.map((_, i) => i + 1));
    assert.equal(new Set(GATES.map((g) => g.id)).size, 21);
    assert.equal(new Set(GATES.map((g) => g.check)).size, 21);
    assert.equal(catalog.gatesById.size, 21);
  });

  it('has an evaluator for every check key, and no evaluator without a gate', () => {
    assert.deepEqual(GATES.map((g) => g.check).sort(), Object.keys(GATE_EVALUATORS).sort());
  });

  it('covers every category', () => {
    const counts = GATES.reduce<Record<string, number>>((m, g) => ({ ...m, [g.category]: (m[g.category] ?? 0) + 1 }), {});
    assert.deepEqual(counts, { safety: 6, correctness: 6, performance: 4, compliance: 5 });
  });

  it('has thresholds exactly for the numeric gates', () => {
    const numeric = GATES.filter((g) => g.comparison !== null).map((g) => g.id);
    assert.deepEqual([...numeric].sort(), [...QUALITY, ...BUDGETS].sort());
    for (const g of GATES) {
      for (const s of SCOPES) assert.equal(g.thresholds[s] === null, g.comparison === null, `${g.id} ${s}`);
    }
  });

  it('uses the confidence thresholds of gates.md', () => {
    assert.deepEqual(gate('confidence').thresholds, { demo: 0.3, poc: 0.5, mvp: 0.6, product: 0.75, production: 0.85 });
  });

  it('makes quality thresholds monotonically stricter from demo to production', () => {
    for (const id of QUALITY) {
      const g = gate(id);
      assert.equal(g.scaling, 'quality', id);
      const values = SCOPES.map((s) => g.thresholds[s] as number);
      for (let i = 1; i < values.length; i++) assert.ok(atLeastAsStrict(g, values[i - 1]!, values[i]!), `${id}: ${values.join(' ')}`);
      assert.ok(atLeastAsStrict(g, values[0]!, values.at(-1)!) && values[0] !== values.at(-1), `${id} production stricter than demo`);
    }
  });

  it('grows budgets from demo to production', () => {
    for (const id of BUDGETS) {
      const g = gate(id);
      assert.equal(g.scaling, 'budget', id);
      assert.equal(g.comparison, 'max', id);
      const values = SCOPES.map((s) => g.thresholds[s] as number);
      for (let i = 1; i < values.length; i++) assert.ok(values[i]! >= values[i - 1]!, `${id}: ${values.join(' ')}`);
    }
  });

  describe('adjustedThreshold (stricter after failure)', () => {
    it('keeps thresholds without recent failures, and ignores nonsense counts', () => {
      for (const g of GATES) for (const s of SCOPES) {
        assert.equal(adjustedThreshold(g, s, 0), g.thresholds[s]);
        assert.equal(adjustedThreshold(g, s, -3), g.thresholds[s]);
        assert.equal(adjustedThreshold(g, s, Number.NaN), g.thresholds[s]);
      }
    });

    it('raises min gates by 10% of the headroom per failure, capped', () => {
      const c = gate('confidence');
      assert.equal(adjustedThreshold(c, 'production', 1), 0.865);
      assert.ok(Math.abs(adjustedThreshold(c, 'mvp', 2)! - (1 - 0.4 * 0.81)) < 1e-4);
      const cov = gate('coverage');
      assert.equal(adjustedThreshold(cov, 'mvp', 1), 64);
      assert.equal(adjustedThreshold(cov, 'demo', 1), 10);
      for (let n = 0; n < 20; n++) assert.ok(adjustedThreshold(c, 'production', n)! <= 1);
    });

    it('multiplies max quality gates by 0.8 per failure, rounded down, never below the floor', () => {
      assert.equal(adjustedThreshold(gate('change-size'), 'production', 1), 320);
      assert.equal(adjustedThreshold(gate('change-size'), 'production', 2), 256);
      assert.equal(adjustedThreshold(gate('complexity'), 'mvp', 1), 16);
      assert.equal(adjustedThreshold(gate('complexity'), 'production', 5), 6); // capped at MAX_ADJUSTMENT_STEPS = 2: 10 * 0.8^2
      assert.equal(adjustedThreshold(gate('destructive-change'), 'production', 3), 0);
      assert.equal(adjustedThreshold(gate('destructive-change'), 'demo', 1), 40);
    });

    it('is monotonic in the failure count and stops after MAX_ADJUSTMENT_STEPS', () => {
      for (const id of QUALITY) {
        const g = gate(id);
        for (const s of SCOPES) {
          let prev = adjustedThreshold(g, s, 0)!;
          for (let n = 1; n <= MAX_ADJUSTMENT_STEPS + 3; n++) {
            const next = adjustedThreshold(g, s, n)!;
            assert.ok(atLeastAsStrict(g, prev, next), `${id} ${s} n=${n}`);
            prev = next;
          }
          assert.equal(adjustedThreshold(g, s, MAX_ADJUSTMENT_STEPS + 10), adjustedThreshold(g, s, MAX_ADJUSTMENT_STEPS));
        }
      }
    });

    it('leaves budgets and pass/fail gates unchanged', () => {
      assert.equal(adjustedThreshold(gate('phase-latency'), 'mvp', 3), gate('phase-latency').thresholds.mvp);
      assert.equal(adjustedThreshold(gate('cost-budget'), 'poc', 3), gate('cost-budget').thresholds.poc);
      assert.equal(adjustedThreshold(gate('tests-pass'), 'production', 3), null);
    });
  });

  it('requires 90% coverage for incident-fix pull requests whatever the scope', () => {
    assert.equal(INCIDENT_FIX_COVERAGE, 90);
    for (const s of SCOPES) {
      assert.ok(coverageThresholdFor(s, { incidentFix: true }) >= 90, s);
      assert.equal(coverageThresholdFor(s), gate('coverage').thresholds[s]);
    }
    assert.equal(coverageThresholdFor('demo', { incidentFix: true }), 90);
    assert.equal(coverageThresholdFor('production', { incidentFix: true, recentFailures: 1 }), 91);
  });

  it('composes the effective threshold: failures, tier token factor, incident fix', () => {
    assert.equal(effectiveThreshold(gate('cost-budget'), { scope: 'mvp' }), 200_000);
    assert.equal(effectiveThreshold(gate('cost-budget'), { scope: 'mvp', tier: 'ultra' }), 800_000);
    assert.equal(effectiveThreshold(gate('confidence'), { scope: 'production', recentFailures: 1 }), 0.865);
    assert.equal(effectiveThreshold(gate('coverage'), { scope: 'poc', incidentFix: true }), 90);
    assert.equal(effectiveThreshold(gate('secrets-clean'), { scope: 'poc' }), null);
  });

  it('compares values against min and max thresholds', () => {
    assert.equal(meetsThreshold(gate('confidence'), 0.6, 0.6), true);
    assert.equal(meetsThreshold(gate('confidence'), 0.59, 0.6), false);
    assert.equal(meetsThreshold(gate('complexity'), 10, 10), true);
    assert.equal(meetsThreshold(gate('complexity'), 11, 10), false);
    assert.throws(() => meetsThreshold(gate('tests-pass'), 1, 1));
  });
});
