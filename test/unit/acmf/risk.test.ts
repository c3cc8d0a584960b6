import assert from 'node:assert/strict';
import {
  assessRisk,
  globToRegExp,
  matchesGlob,
  maxRisk,
  normalizeWorkspacePath,
  RISK_LEVELS,
  riskRank,
  type RiskContext,
} from '../../../server/src/engine/acmf/risk';
import type { ProposedAction } from '../../../server/src/engine/acmf/records';

const ctx = (over: Partial<RiskContext> = {}): RiskContext => ({ protectedPaths: [], approvalRequiredFor: [], scope: 'mvp', ...over });
const act = (kind: string, over: Partial<ProposedAction> = {}): ProposedAction => ({ kind, description: kind, ...over });

describe('acmf risk', () => {
  describe('levels', () => {
    it('orders none < low < medium < high < critical', () => {
      assert.deepEqual([...RISK_LEVELS], ['none', 'low', 'medium', 'high', 'critical']);
      assert.ok(riskRank('none') < riskRank('low') && riskRank('high') < riskRank('critical'));
      assert.equal(maxRisk('medium', 'low'), 'medium');
      assert.equal(maxRisk('low', 'critical'), 'critical');
    });
  });

  describe('glob matcher', () => {
    const cases: Array<[string, string, boolean]> = [
      ['src/a.ts', 'src/*.ts', true],
      ['src/x/a.ts', 'src/*.ts', false],
      ['src/x/a.ts', 'src/**/*.ts', true],
      ['src/a.ts', 'src/**/*.ts', true],
      ['a/b/c/package-lock.json', 'package-lock.json', true],
      ['.github/workflows/ci.yml', '.github/workflows/**', true],
      ['x/.github/workflows/ci.yml', '.github/workflows/**', false],
      ['deploy/k8s/app.yaml', '**/k8s/**', true],
      ['infra/main.tf', '*.tf', true],
      ['file1.txt', 'file?.txt', true],
      ['file12.txt', 'file?.txt', false],
      ['docker-compose.prod.yaml', 'docker-compose*.{yml,yaml}', true],
      ['docker-compose.json', 'docker-compose*.{yml,yaml}', false],
      ['secrets/db/pw', 'secrets/', true],
      ['app/secrets/db/pw', 'secrets/', true],
      ['home/.ssh/id', '.ssh/', true],
      ['app/secrets/db/pw', 'config/secrets/', false],
      ['config/secrets/x', 'config/secrets/', true],
      ['x/main.tf', '/main.tf', false],
      ['main.tf', '/main.tf', true],
      ['./src/a.ts', 'src/a.ts', true],
      ['src\\win\\a.ts', 'src/**', true],
      ['a+b(c).ts', 'a+b(c).ts', true],
      ['aXb', 'a.b', false],
    ];
    for (const [path, glob, expected] of cases) {
      it(`${glob} ${expected ? 'matches' : 'does not match'} ${path}`, () => {
        assert.equal(matchesGlob(path, glob), expected, String(globToRegExp(glob)));
      });
    }

    it('normalises workspace paths and detects escapes', () => {
      assert.equal(normalizeWorkspacePath('./a/./b/../c'), 'a/c');
      assert.equal(normalizeWorkspacePath('../outside'), null);
      assert.equal(normalizeWorkspacePath('a/../../outside'), null);
      assert.equal(normalizeWorkspacePath('/etc/passwd'), null);
      assert.equal(normalizeWorkspacePath('C:\\Windows'), null);
    });
  });

  describe('rules', () => {
    it('a read is none', () => {
      const r = assessRisk(act('read_file', { paths: ['src/a.ts'] }), ctx());
      assert.equal(r.level, 'none');
      assert.match(r.reasons[0]!, /read-only/);
      assert.equal(r.reasons.length, 1);
    });

    it('reading a protected or security path stays none (the rules cover changes)', () => {
      const r = assessRisk(act('read', { paths: ['.env', '.github/workflows/ci.yml'] }), ctx({ protectedPaths: ['.github/**'], approvalRequiredFor: ['security_sensitive'] }));
      assert.equal(r.level, 'none');
    });

    it('scans are reads, also of security kinds', () => {
      assert.equal(assessRisk(act('security_scan', { paths: ['.env'] }), ctx({ approvalRequiredFor: ['security_sensitive'] })).level, 'none');
    });

    it('a read flagged external is not a pure read', () => {
      const r = assessRisk(act('read', { external: true }), ctx());
      assert.equal(r.level, 'medium');
      assert.ok(r.reasons.some((x) => /not a pure read/.test(x)));
      assert.ok(r.reasons.some((x) => /external side effect/.test(x)));
    });

    it('writing inside the workspace is low', () => {
      const r = assessRisk(act('write_file', { paths: ['src/a.ts'] }), ctx());
      assert.equal(r.level, 'low');
      assert.deepEqual(r.reasons, ['changes something (write_file): src/a.ts']);
    });

    it('an unknown kind is a change (low), never a read', () => {
      const r = assessRisk(act('frobnicate'), ctx());
      assert.equal(r.level, 'low');
      assert.match(r.reasons[0]!, /unknown action kind frobnicate/);
    });

    it('writing outside the workspace is critical', () => {
      for (const p of ['../x.ts', '/etc/hosts']) {
        const r = assessRisk(act('write_file', { paths: [p] }), ctx());
        assert.equal(r.level, 'critical', p);
        assert.ok(r.reasons.some((x) => x.includes('outside the workspace')));
      }
    });

    it('deletions, history rewrites and force pushes are high', () => {
      const expectations: Array<[ProposedAction, RegExp]> = [
        [act('delete_file', { paths: ['src/old.ts'] }), /deletes files/],
        [act('git_rewrite_history'), /rewrites git history/],
        [act('git_reset_hard'), /hard reset/],
        [act('write_file', { destructive: true, paths: ['a.txt'] }), /flagged destructive/],
      ];
      for (const [a, why] of expectations) {
        const r = assessRisk(a, ctx());
        assert.equal(r.level, 'high', a.kind);
        assert.ok(r.reasons.some((x) => why.test(x)), r.reasons.join(' | '));
      }
      const push = assessRisk(act('git_force_push'), ctx());
      assert.equal(push.level, 'high');
      assert.ok(push.reasons.some((x) => /force-push/.test(x)));
      assert.ok(push.reasons.some((x) => /external/.test(x)));
    });

    it('a destructive change in scope production is critical', () => {
      const r = assessRisk(act('delete_file', { paths: ['a.ts'] }), ctx({ scope: 'production' }));
      assert.equal(r.level, 'critical');
      assert.ok(r.reasons.some((x) => /scope production/.test(x)));
    });

    it('touching a protected path is high, naming path and glob', () => {
      const r = assessRisk(act('write_file', { paths: ['src/a.ts', '.github/workflows/ci.yml'] }), ctx({ protectedPaths: ['.github/workflows/**'] }));
      assert.equal(r.level, 'high');
      assert.ok(r.reasons.includes('touches protected paths: .github/workflows/ci.yml (matches .github/workflows/**)'), r.reasons.join(' | '));
    });

    it('external side effects are at least medium', () => {
      for (const kind of ['git_push', 'open_pr', 'call_webhook', 'http_request']) {
        const r = assessRisk(act(kind), ctx());
        assert.equal(r.level, 'medium', kind);
        assert.ok(r.reasons.some((x) => x.startsWith('external side effect')));
      }
      assert.equal(assessRisk(act('run_command', { external: true }), ctx()).level, 'medium');
    });

    it('production is critical', () => {
      const flagged = assessRisk(act('deploy', { production: true }), ctx());
      assert.equal(flagged.level, 'critical');
      assert.ok(flagged.reasons.some((x) => x.startsWith('targets production')));
      assert.equal(assessRisk(act('deploy_production'), ctx()).level, 'critical');
      assert.equal(assessRisk(act('deploy_staging'), ctx()).level, 'medium');
    });

    it('security-sensitive changes are medium without the category', () => {
      const r = assessRisk(act('write_file', { paths: ['config/.env'] }), ctx());
      assert.equal(r.level, 'medium');
      assert.ok(r.reasons.some((x) => x.startsWith('security-sensitive')));
    });

    it('changing Cadre\'s own configuration is critical', () => {
      const r = assessRisk(act('write_file', { paths: ['.cadre.yaml'] }), ctx());
      assert.equal(r.level, 'critical');
      assert.ok(r.reasons.some((x) => /own configuration/.test(x)));
    });

    describe('approval_required_for', () => {
      it('production_changes names the category on production actions', () => {
        const r = assessRisk(act('deploy', { production: true }), ctx({ approvalRequiredFor: ['production_changes'] }));
        assert.equal(r.level, 'critical');
        assert.ok(r.reasons.some((x) => x.startsWith('approval_required_for: production_changes')));
        const staging = assessRisk(act('deploy_staging'), ctx({ approvalRequiredFor: ['production_changes'] }));
        assert.equal(staging.level, 'medium');
      });

      it('security_sensitive raises secret/auth paths and kinds to critical', () => {
        const c = ctx({ approvalRequiredFor: ['security_sensitive'] });
        for (const a of [
          act('write_file', { paths: ['deploy/server.pem'] }),
          act('edit_file', { paths: ['src/auth/login.ts'] }),
          act('write_file', { paths: ['.env.production'] }),
          act('rotate_secret'),
          act('update_iam_policy'),
        ]) {
          const r = assessRisk(a, c);
          assert.equal(r.level, 'critical', `${a.kind} ${a.paths?.join(',') ?? ''}`);
          assert.ok(r.reasons.some((x) => x.startsWith('approval_required_for: security_sensitive')), r.reasons.join(' | '));
        }
        assert.equal(assessRisk(act('write_file', { paths: ['src/app.ts'] }), c).level, 'low');
      });

      it('named path categories and globs raise matching changes to critical', () => {
        const lock = assessRisk(act('write_file', { paths: ['web/package-lock.json'] }), ctx({ approvalRequiredFor: ['dependency_changes'] }));
        assert.equal(lock.level, 'critical');
        const ci = assessRisk(act('write_file', { paths: ['.github/workflows/x.yml'] }), ctx({ approvalRequiredFor: ['ci_changes'] }));
        assert.equal(ci.level, 'critical');
        const tf = assessRisk(act('write_file', { paths: ['infra/main.tf'] }), ctx({ approvalRequiredFor: ['infrastructure_changes'] }));
        assert.equal(tf.level, 'critical');
        const del = assessRisk(act('delete_file', { paths: ['a'] }), ctx({ approvalRequiredFor: ['destructive_changes'] }));
        assert.equal(del.level, 'critical');
        const glob = assessRisk(act('write_file', { paths: ['db/migrations/001.sql'] }), ctx({ approvalRequiredFor: ['db/migrations/**'] }));
        assert.equal(glob.level, 'critical');
        assert.ok(glob.reasons.some((x) => x.includes('db/migrations/001.sql (matches db/migrations/**)')));
        const miss = assessRisk(act('write_file', { paths: ['src/a.ts'] }), ctx({ approvalRequiredFor: ['db/migrations/**', 'dependency_changes'] }));
        assert.equal(miss.level, 'low');
      });
    });

    it('is deterministic and lists a reason per rule that fired', () => {
      const a = act('git_force_push', { paths: ['.github/workflows/ci.yml'], production: true });
      const c = ctx({ protectedPaths: ['.github/**'], approvalRequiredFor: ['production_changes'] });
      const first = assessRisk(a, c);
      assert.deepEqual(assessRisk(a, c), first);
      assert.equal(first.level, 'critical');
      assert.equal(first.reasons.length, 6, first.reasons.join(' | '));
    });
  });
});
