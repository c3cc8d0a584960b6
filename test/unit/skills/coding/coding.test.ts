import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GATE_EVALUATORS } from '../../../../server/src/engine/rigor/gate-evaluators';
import type { SkillContext, StepRequest, StepSummary } from '../../../../server/src/engine/rigor/skill';
import { applyEdits, codingSkills, collectFixable, diffStats, fixSkill, previewable, PREVIEW_MAX_BYTES, refactorSkill, safeRelative, shortId } from '../../../../server/src/skills/coding';
import type { Finding } from '../../../../server/src/skills/findings/finding';
import { skills } from '../../../../server/src/skills/builtin';
import { createHarness } from '../../../support/engine-harness';

const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

function repo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-coder-')));
  sh(dir, 'init', '-q', '-b', 'main');
  sh(dir, 'config', 'user.name', 'Test');
  sh(dir, 'config', 'user.email', 'test@example.com');
  sh(dir, 'config', 'commit.gpgsign', 'false');
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'src/a.ts'), "const x = eval('1');\nconst y = 2;\nconsole.log(x, y);\n");
  writeFileSync(path.join(dir, 'src/b.ts'), 'export const debug = true;\n');
  writeFileSync(path.join(dir, 'README.md'), 'hello\n');
  sh(dir, 'add', '.');
  sh(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

function finding(ruleId: string, file: string, line: number, edits: Array<[number, number, number, number, string]>, fp: string): Finding {
  return {
    ruleId, severity: 'medium', message: `${ruleId} at ${line}`, file, fingerprint: fp,
    range: { startLine: line, startColumn: 1, endLine: line, endColumn: 2 },
    fix: { description: `fix ${ruleId}`, edits: edits.map(([sl, sc, el, ec, newText]) => ({ file, range: { startLine: sl, startColumn: sc, endLine: el, endColumn: ec }, newText })) },
  };
}

const FINDINGS: Finding[] = [
  finding('code/eval', 'src/a.ts', 1, [[1, 11, 1, 20, "Number('1')"]], 'f1'),
  finding('code/console', 'src/a.ts', 3, [[3, 1, 4, 1, '']], 'f2'),
  finding('code/debug-flag', 'src/b.ts', 1, [[1, 22, 1, 26, 'false']], 'f3'),
];

function ctx(action: string, workspace: string | undefined, allowed: (k: string) => boolean, input: Record<string, unknown> = {}, previous: StepSummary[] = []): SkillContext {
  const request: StepRequest = {
    executionId: 'A1b2-C3d4-e5f6', step: 1, agentId: 'coder-ai', action, goal: { id: 'goal-c', prompt: 'fix the findings' }, input,
    scope: 'workspace' as StepRequest['scope'], tier: 'standard' as StepRequest['tier'], previous, ...(workspace ? { workspace } : {}),
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed, once: (_k, f) => f() };
}

async function run(skill: typeof fixSkill, c: SkillContext) {
  const ev = await skill.research(c);
  const actions = await skill.propose(c, ev);
  const artifact = await skill.generate(c, ev);
  return { ev, actions, artifact };
}

interface FixData { mode: string; branch: string | null; diff: string; verification: { untouched: boolean; statusUnchanged: boolean } }

describe('coder-ai skills', () => {
  const dirs: string[] = [];
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
  const newRepo = () => { const d = repo(); dirs.push(d); return d; };

  describe('edit machinery', () => {
    it('applies edits bottom-up, rejects overlaps and out-of-range edits', () => {
      const r = applyEdits('abc\ndef\n', [
        { file: 'f', range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 }, newText: 'X' },
        { file: 'f', range: { startLine: 2, startColumn: 2, endLine: 2, endColumn: 4 }, newText: 'YY' },
        { file: 'f', range: { startLine: 2, startColumn: 1, endLine: 2, endColumn: 3 }, newText: 'no' },
        { file: 'f', range: { startLine: 9, startColumn: 1, endLine: 9, endColumn: 2 }, newText: 'no' },
      ]);
      assert.equal(r.text, 'Xbc\ndYY\n');
      assert.deepEqual(r.replaced, ['a', 'ef']);
      assert.deepEqual(r.rejected.map((x) => x.reason).sort(), ['overlaps another edit', 'range outside the file']);
    });

    it('keeps paths inside the workspace; short ids; diff stats', () => {
      assert.equal(safeRelative('./src/a.ts'), 'src/a.ts');
      assert.equal(safeRelative('../x'), undefined);
      assert.equal(safeRelative('/etc/passwd'), undefined);
      assert.equal(shortId('A1b2-C3d4-e5f6'), 'a1b2c3d4e5f6');
      assert.equal(shortId('task_0123456789abcdef01234567'), 'task01234567');
      const s = diffStats('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c\n');
      assert.deepEqual(s.get('x'), { added: 2, removed: 1 });
    });

    it('collects fixable findings from input and previous steps, de-duplicated', () => {
      const prev: StepSummary[] = [{ step: 0, agentId: 'security-ai', action: 'scan', passed: true, confidence: 0.9, summary: '', data: { findings: [FINDINGS[2], { ...FINDINGS[0], fix: undefined }] } }];
      assert.deepEqual(collectFixable({ findings: [FINDINGS[0], FINDINGS[2]] }, prev).map((f) => f.fingerprint), ['f1', 'f3']);
    });
  });

  describe('fix', () => {
    it('commits two edits in one file and one in another on a new branch; the user branch and uncommitted work are untouched', async () => {
      const dir = newRepo();
      writeFileSync(path.join(dir, 'README.md'), 'hello, uncommitted\n');
      writeFileSync(path.join(dir, 'notes.txt'), 'untracked\n');
      const headBefore = sh(dir, 'rev-parse', 'HEAD');
      const statusBefore = sh(dir, 'status', '--porcelain');
      const aBefore = readFileSync(path.join(dir, 'src/a.ts'), 'utf8');

      const { actions, artifact } = await run(fixSkill, ctx('fix', dir, () => true, { findings: FINDINGS }));
      assert.deepEqual(actions.map((a) => a.kind), ['write_file', 'git_commit']);
      assert.equal(artifact.unable, undefined, artifact.summary);
      const data = artifact.data as FixData;
      assert.equal(data.mode, 'branch');
      assert.equal(data.branch, 'cadre/a1b2c3d4e5f6-s1-fix');
      assert.deepEqual(artifact.rollback, { kind: 'branch', ref: 'cadre/a1b2c3d4e5f6-s1-fix' });
      assert.deepEqual(artifact.actionsTaken!.map((a) => a.kind), ['write_file', 'git_commit']);
      assert.equal(artifact.goalRef, 'goal-c');
      assert.ok(artifact.confidence > 0.9);

      // The user's checkout is as it was.
      assert.equal(sh(dir, 'rev-parse', 'HEAD'), headBefore);
      assert.equal(sh(dir, 'status', '--porcelain'), statusBefore);
      assert.equal(sh(dir, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'main');
      assert.equal(readFileSync(path.join(dir, 'src/a.ts'), 'utf8'), aBefore);
      assert.ok(data.verification.untouched);
      assert.equal(sh(dir, 'worktree', 'list').trim().split('\n').length, 1, 'temporary worktree removed');

      // The branch has one commit on top of HEAD with the edits.
      assert.equal(sh(dir, 'rev-parse', 'cadre/a1b2c3d4e5f6-s1-fix~1'), headBefore);
      assert.equal(sh(dir, 'show', 'cadre/a1b2c3d4e5f6-s1-fix:src/a.ts'), "const x = Number('1');\nconst y = 2;\n");
      assert.equal(sh(dir, 'show', 'cadre/a1b2c3d4e5f6-s1-fix:src/b.ts'), 'export const debug = false;\n');
      assert.equal(sh(dir, 'show', 'cadre/a1b2c3d4e5f6-s1-fix:README.md'), 'hello\n', 'uncommitted work not carried over');
      const msg = sh(dir, 'log', '-1', '--format=%B', 'cadre/a1b2c3d4e5f6-s1-fix');
      assert.match(msg, /cadre: fix 3 findings/);
      assert.match(msg, /code\/eval src\/a\.ts:1/);

      assert.match(data.diff, /^diff --git a\/src\/a\.ts b\/src\/a\.ts/m);
      assert.match(data.diff, /^-console\.log\(x, y\);$/m);
      assert.deepEqual(artifact.changes!.map((c) => [c.path, c.kind, c.linesAdded, c.linesRemoved]), [['src/a.ts', 'modify', 1, 2], ['src/b.ts', 'modify', 1, 1]]);
      assert.equal(artifact.changes![1]!.content, 'export const debug = false;\n');
      assert.deepEqual(artifact.changes!.map((c) => c.applied), [true, true], 'committed changes are marked applied');

      // The commit carries the step's trailer, for a resumed step to find it.
      assert.match(msg, /^Cadre-Execution: A1b2-C3d4-e5f6:1$/m);
      // The same execution step run again (a resume after a crash) adopts its branch: no -2, no second commit.
      const tip = sh(dir, 'rev-parse', 'cadre/a1b2c3d4e5f6-s1-fix');
      const again = await run(fixSkill, ctx('fix', dir, () => true, { findings: FINDINGS }));
      assert.equal((again.artifact.data as FixData).branch, 'cadre/a1b2c3d4e5f6-s1-fix');
      assert.equal(sh(dir, 'rev-parse', 'cadre/a1b2c3d4e5f6-s1-fix'), tip);
      assert.deepEqual(sh(dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/cadre/').trim().split('\n'), ['cadre/a1b2c3d4e5f6-s1-fix']);
      assert.equal(sh(dir, 'worktree', 'list').trim().split('\n').length, 1, 'no worktree left');
    });

    it('takes the findings of previous steps', async () => {
      const dir = newRepo();
      const prev: StepSummary[] = [{ step: 0, agentId: 'review-ai', action: 'review', passed: true, confidence: 0.8, summary: '', data: { findings: [FINDINGS[2]] } }];
      const { artifact } = await run(fixSkill, ctx('fix', dir, () => true, {}, prev));
      assert.equal(sh(dir, 'show', 'cadre/a1b2c3d4e5f6-s1-fix:src/b.ts'), 'export const debug = false;\n');
      assert.equal(artifact.changes!.length, 1);
    });

    it('proposal only when ACMF does not allow git_commit: same diff, no branch', async () => {
      const dir = newRepo();
      const statusBefore = sh(dir, 'status', '--porcelain');
      const { artifact } = await run(fixSkill, ctx('fix', dir, (k) => k !== 'git_commit', { findings: FINDINGS }));
      const data = artifact.data as FixData;
      assert.equal(data.mode, 'proposal');
      assert.equal(data.branch, null);
      assert.match(artifact.summary, /proposed as a diff: ACMF did not allow git_commit, no branch/);
      assert.deepEqual(artifact.actionsTaken, []);
      assert.deepEqual(artifact.rollback, { kind: 'none_needed', ref: '' });
      assert.equal(sh(dir, 'branch', '--list', 'cadre/*').trim(), '');
      // The editor's preview: each file's proposed content and the hash of the content it applies to.
      const files = (artifact.data as { files: Array<{ path: string; beforeSha256: string; after: string | null }> }).files;
      assert.deepEqual(files.map((f) => f.path), ['src/a.ts', 'src/b.ts']);
      assert.equal(files[1]!.beforeSha256, createHash('sha256').update('export const debug = true;\n').digest('hex'));
      assert.equal(files[1]!.after, 'export const debug = false;\n');
      assert.equal(sh(dir, 'status', '--porcelain'), statusBefore);
      assert.match(data.diff, /^diff --git a\/src\/b\.ts b\/src\/b\.ts$/m);
      assert.match(data.diff, /^\+export const debug = false;$/m);
      assert.deepEqual(artifact.changes!.map((c) => [c.path, c.linesAdded, c.linesRemoved]), [['src/a.ts', 1, 2], ['src/b.ts', 1, 1]]);
      assert.deepEqual(artifact.changes!.map((c) => c.applied), [false, false], 'a proposal wrote nothing');
    });

    it('keeps no preview content that is too large or still holds a secret', () => {
      assert.equal(previewable('a.ts', 'const a = 1;\n'), 'const a = 1;\n');
      assert.equal(previewable('a.ts', 'x'.repeat(PREVIEW_MAX_BYTES + 1)), null);
      assert.equal(previewable('a.js', `const k = "${'AK' + 'IA'}QWERTYUIOPASDFGH";\n`), null);
    });

    it('unable outside a git repository, and without fixable findings', async () => {
      const plain = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-coder-plain-')));
      dirs.push(plain);
      writeFileSync(path.join(plain, 'a.ts'), 'x\n');
      const { artifact } = await run(fixSkill, ctx('fix', plain, () => true, { findings: FINDINGS }));
      assert.match(artifact.unable!, /not a git repository/);
      assert.equal(artifact.confidence, 0);
      const dir = newRepo();
      const none = await run(fixSkill, ctx('fix', dir, () => true, {}));
      assert.match(none.artifact.notApplicable!, /no finding with a fix/, 'nothing to fix is not applicable, not unable');
      assert.equal(none.artifact.unable, undefined);
    });
  });

  describe('refactor', () => {
    it('moves a hard-coded secret into an env read on a new branch; the diff text redacts it', async () => {
      const dir = newRepo();
      const secret = 'AKIA' + 'Z7QRSTUVWXY2345A';
      writeFileSync(path.join(dir, 'src/config.ts'), `export const awsKey = "${secret}";\n`);
      writeFileSync(path.join(dir, 'src/settings.py'), `KEY = "${secret}"\n`);
      sh(dir, 'add', '.');
      sh(dir, 'commit', '-q', '-m', 'config');
      const head = sh(dir, 'rev-parse', 'HEAD');
      const { actions, artifact } = await run(refactorSkill, ctx('refactor', dir, () => true));
      assert.equal(artifact.unable, undefined, artifact.summary);
      assert.deepEqual(actions.map((a) => a.kind), ['write_file', 'git_commit']);
      const branch = 'cadre/a1b2c3d4e5f6-s1-refactor';
      assert.deepEqual(artifact.rollback, { kind: 'branch', ref: branch });
      assert.match(sh(dir, 'show', `${branch}:src/config.ts`), /^export const awsKey = process\.env\.\w+;\n$/);
      assert.match(sh(dir, 'show', `${branch}:src/settings.py`), /^import os\nKEY = os\.environ\["\w+"\]\n$/);
      assert.equal(sh(dir, 'rev-parse', 'HEAD'), head);
      assert.ok(!artifact.text!.includes(secret), 'the secret does not leave the step');
      assert.ok(!JSON.stringify(artifact.data).includes(secret));
      assert.ok(artifact.text!.includes('AKIA…(20 chars)'));
    });

    it('registered in the builtin skills', () => {
      assert.equal(codingSkills.length, 2);
      assert.ok(skills.some((s) => s.agentId === 'coder-ai' && s.action === 'fix'));
    });
  });
  describe('Review: rollback-ready', () => {
    const rollbackGate = (r: { gates: Array<{ gate: string; status: string; reason: string; value: unknown }> }) => r.gates.find((g) => g.gate === 'rollback-ready')!;

    it('a fix only proposed in LEARNING mode (approval rejected) passes as not applicable: nothing was written', async () => {
      const dir = newRepo();
      const h = await createHarness({ skills: [fixSkill], yaml: 'agents:\n  coder-ai:\n    acmf_mode: LEARNING\n' });
      try {
        const running = h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'fix', workspace: dir, input: { findings: FINDINGS } }));
        // LEARNING asks for each action; a person says no to each, so the skill only proposes a diff.
        let done = false;
        const approver = (async () => {
          const decided = new Set<string>();
          while (!done) {
            for (const e of h.events) {
              if (e.type !== 'approval_requested' || decided.has(e.approval_id)) continue;
              decided.add(e.approval_id);
              await h.engine.acmf.decideApproval(e.approval_id, { approved: false, by: 'user:bob' });
            }
            await new Promise((r) => setTimeout(r, 5));
          }
        })();
        const result = await running.finally(() => { done = true; });
        await approver;
        assert.ok(h.events.some((e) => e.type === 'approval_requested'), 'LEARNING asked for approval');
        assert.equal((result.artifact!.data as FixData).mode, 'proposal');
        assert.equal(result.artifact!.changes!.length, 2);
        const g = rollbackGate(result);
        assert.equal(g.status, 'not_applicable', g.reason);
        assert.match(g.reason, /only proposed/);
        assert.equal(sh(dir, 'branch', '--list', 'cadre/*').trim(), '');
      } finally {
        await h.close();
      }
    });

    it('a fix committed on a branch still needs (and has) its branch rollback', async () => {
      const dir = newRepo();
      const h = await createHarness({ skills: [fixSkill], yaml: 'agents:\n  coder-ai:\n    acmf_mode: AUTONOMOUS\n    approval_required_for: []\n' });
      try {
        const result = await h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'fix', workspace: dir, input: { findings: FINDINGS } }));
        const data = result.artifact!.data as FixData;
        assert.equal(data.mode, 'branch', JSON.stringify(result.decisions.map((d) => [d.action.kind, d.decision])));
        const g = rollbackGate(result);
        assert.equal(g.status, 'pass', g.reason);
        assert.equal(g.value, data.branch);
        // Without its rollback the same committed change fails the gate.
        const subject = { request: h.request(), evidence: { items: [], constraints: [], pathsRead: [] }, artifact: { ...result.artifact!, rollback: { kind: 'none_needed' as const, ref: '' } } } as unknown as Parameters<typeof GATE_EVALUATORS.rollbackReady>[0];
        assert.equal(GATE_EVALUATORS.rollbackReady(subject).status, 'fail');
      } finally {
        await h.close();
      }
    });
  });
});
