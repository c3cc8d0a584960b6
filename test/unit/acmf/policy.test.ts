import assert from 'node:assert/strict';
import { ACMF_MODES, type AcmfMode } from '../../../server/src/engine/catalog/enums';
import {
  decide,
  decidePr,
  DECISION_TABLE,
  higherMode,
  lowerMode,
  minMode,
  prBehaviour,
  type AcmfDecision,
} from '../../../server/src/engine/acmf/policy';
import type { RiskLevel } from '../../../server/src/engine/acmf/records';
import { RISK_LEVELS } from '../../../server/src/engine/acmf/risk';

describe('acmf policy', () => {
  describe('decision table (4 modes x 5 risks)', () => {
    const expected: Record<AcmfMode, Record<RiskLevel, AcmfDecision>> = {
      OBSERVE: { none: 'allow', low: 'observe_only', medium: 'observe_only', high: 'observe_only', critical: 'observe_only' },
      LEARNING: { none: 'allow', low: 'approval_required', medium: 'approval_required', high: 'approval_required', critical: 'approval_required' },
      ASSISTED: { none: 'allow', low: 'allow', medium: 'allow', high: 'allow', critical: 'approval_required' },
      AUTONOMOUS: { none: 'allow', low: 'allow', medium: 'allow', high: 'allow', critical: 'allow' },
    };
    for (const mode of ACMF_MODES) {
      for (const risk of RISK_LEVELS) {
        it(`${mode} x ${risk} -> ${expected[mode][risk]}`, () => {
          assert.equal(decide(mode, risk), expected[mode][risk]);
        });
      }
    }

    it('covers every mode and every risk level', () => {
      assert.deepEqual(Object.keys(DECISION_TABLE).sort(), [...ACMF_MODES].sort());
      for (const mode of ACMF_MODES) assert.deepEqual(Object.keys(DECISION_TABLE[mode]).sort(), [...RISK_LEVELS].sort());
    });
  });

  describe('mode ladder', () => {
    it('lowers one level at a time and stops at OBSERVE', () => {
      assert.equal(lowerMode('AUTONOMOUS'), 'ASSISTED');
      assert.equal(lowerMode('ASSISTED'), 'LEARNING');
      assert.equal(lowerMode('LEARNING'), 'OBSERVE');
      assert.equal(lowerMode('OBSERVE'), 'OBSERVE');
      assert.equal(higherMode('AUTONOMOUS'), 'AUTONOMOUS');
      assert.equal(higherMode('OBSERVE'), 'LEARNING');
      assert.equal(minMode('ASSISTED', 'LEARNING'), 'LEARNING');
    });
  });

  describe('pull requests', () => {
    it('follows the contract table', () => {
      assert.equal(prBehaviour('OBSERVE').creation, 'log_only');
      assert.equal(prBehaviour('LEARNING').creation, 'after_approval');
      assert.equal(prBehaviour('ASSISTED').creation, 'automatic');
      assert.equal(prBehaviour('ASSISTED').approvalFromRisk, 'high');
      assert.equal(prBehaviour('AUTONOMOUS').creation, 'automatic');
      assert.equal(prBehaviour('AUTONOMOUS').manage, true);
      assert.equal(prBehaviour('AUTONOMOUS').mergeNeedsApproval, false);
    });

    it('decides PR creation per mode and risk', () => {
      for (const risk of RISK_LEVELS) {
        assert.equal(decidePr('OBSERVE', risk), 'observe_only');
        assert.equal(decidePr('LEARNING', risk), 'approval_required');
        assert.equal(decidePr('AUTONOMOUS', risk), 'allow');
      }
      assert.equal(decidePr('ASSISTED', 'medium'), 'allow');
      assert.equal(decidePr('ASSISTED', 'high'), 'approval_required');
      assert.equal(decidePr('ASSISTED', 'critical'), 'approval_required');
    });

    it('incident PRs default to LEARNING and always need approval before merge', () => {
      for (const mode of ['LEARNING', 'ASSISTED', 'AUTONOMOUS'] as const) {
        const b = prBehaviour(mode, { incident: true });
        assert.equal(b.mode, 'LEARNING');
        assert.equal(b.creation, 'after_approval');
        assert.equal(b.mergeNeedsApproval, true);
        assert.equal(decidePr(mode, 'low', { incident: true }), 'approval_required');
      }
      // Never more autonomy than the agent has.
      assert.equal(prBehaviour('OBSERVE', { incident: true }).mode, 'OBSERVE');
      assert.equal(decidePr('OBSERVE', 'low', { incident: true }), 'observe_only');
    });
  });
});
