/**
 * coder-ai's embedded skills: `fix` applies the text edits findings carry, `refactor` moves hard-coded
 * secret literals into environment reads. Output is always a diff on a NEW branch made in a separate
 * worktree (the user's branch, index and uncommitted work are never touched), or, when ACMF did not
 * allow the commit, the same diff as a proposal with no branch.
 */
import { existsSync, statSync } from 'node:fs';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, FileChange, Skill, SkillContext } from '../../engine/rigor/skill';
import type { Finding, TextEdit } from '../findings/finding';
import { SECRET_RULE_BY_ID } from '../security/rules';
import { redact, scanText, scanTree } from '../security/scanner';
import { sha256 } from '../findings/finding';
import { applyEdits, collectFixable, diffStats, safeRelative } from './apply';
import { checkoutState, commitOnNewBranch, effectBranch, effectTrailer, findEffectBranch, plannedWorktree, proposalDiff, repoInfo, showHead, type RepoInfo } from './git';
import { makeGenerateSkill } from './generate';
import { WorkspaceFiles } from '../workspace/files';

export * from './apply';
export * from './git';
export { canParse, checkCode, withCodeSyntax } from './syntax';

export type CodingAction = 'fix' | 'refactor';

export interface PlannedFile {
  /** Workspace-relative. */
  path: string;
  /** Repository-relative (as in the diff). */
  repoPath: string;
  before: string;
  after: string;
  applied: TextEdit[];
  /** Secret literals the edits removed: redacted in the diff text that leaves the step. */
  secrets: string[];
  /** The working-tree copy differs from HEAD: the edits were applied to the HEAD version. */
  dirty: boolean;
}

export interface CodingPlan {
  repo?: RepoInfo;
  findings: Finding[];
  files: PlannedFile[];
  skipped: Array<{ finding?: string; file: string; reason: string }>;
  totalEdits: number;
  branchBase: string;
}

/** Secret findings: rule ids of the secret rules (or a `secrets/` family prefix) with an env-read fix. */
export function isSecretFinding(f: Finding): boolean {
  const id = f.ruleId.replace(/^secrets?[/.:]/, '');
  return SECRET_RULE_BY_ID.has(id) || /^secrets?[/.:]/.test(f.ruleId);
}

function workspaceOf(ctx: SkillContext): string | undefined {
  const ws = ctx.request.workspace;
  return ws && existsSync(ws) && statSync(ws).isDirectory() ? ws : undefined;
}

/** Python: an `os.environ[...]` read needs `import os`; an insertion at the top (after a shebang / encoding line). */
function pythonImportOs(text: string, file: string): TextEdit | undefined {
  if (/^\s*(import\s+os\b|from\s+os\s+import\b)/m.test(text)) return undefined;
  const lines = text.split('\n');
  let line = 1;
  while (line <= lines.length && /^#(!|.*coding[:=])/.test(lines[line - 1]!)) line++;
  if (lines[line - 1]?.startsWith('from __future__')) line++;
  return { file, range: { startLine: line, startColumn: 1, endLine: line, endColumn: 1 }, newText: 'import os\n' };
}

export async function planEdits(workspace: string, action: CodingAction, input: Record<string, unknown>, previous: SkillContext['request']['previous']): Promise<CodingPlan> {
  const repo = await repoInfo(workspace);
  const plan: CodingPlan = { findings: [], files: [], skipped: [], totalEdits: 0, branchBase: action, ...(repo ? { repo } : {}) };
  let findings = collectFixable(input, previous);
  if (action === 'refactor') {
    findings = findings.filter(isSecretFinding);
    if (!findings.length) findings = (await scanTree(workspace)).findings.filter((f) => f.fix && f.fix.edits.length);
  }
  if (!repo?.head) { plan.findings = findings; return plan; }
  const byFile = new Map<string, Array<{ edit: TextEdit; finding: Finding }>>();
  for (const f of findings) {
    const bad = f.fix!.edits.find((e) => !safeRelative(e.file));
    if (bad) { plan.skipped.push({ finding: f.fingerprint, file: bad.file, reason: 'edit outside the workspace' }); continue; }
    plan.findings.push(f);
    for (const e of f.fix!.edits) {
      const rel = safeRelative(e.file)!;
      byFile.set(rel, [...(byFile.get(rel) ?? []), { edit: { ...e, file: rel }, finding: f }]);
    }
  }
  for (const [rel, list] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    const repoPath = repo.prefix + rel;
    plan.totalEdits += list.length;
    const before = await showHead(repo.top, repoPath);
    if (before === undefined) { plan.skipped.push({ file: rel, reason: 'not committed at HEAD' }); continue; }
    // The working copy only inside the workspace: a symlink out is not read (its content would reach the diff).
    const read = new WorkspaceFiles(workspace).readText(rel);
    if (!read.ok && read.reason !== 'not found') { plan.skipped.push({ file: rel, reason: `${read.reason}, not read` }); continue; }
    const working: string | undefined = read.ok ? read.text : undefined;
    const edits = list.map((x) => x.edit);
    const secretEdits = new Set(list.filter((x) => isSecretFinding(x.finding)).map((x) => x.edit));
    if (action === 'refactor' && rel.endsWith('.py') && edits.some((e) => e.newText.includes('os.environ'))) {
      const imp = pythonImportOs(before, rel);
      if (imp) edits.push(imp);
    }
    const r = applyEdits(before, edits);
    for (const x of r.rejected) plan.skipped.push({ file: rel, reason: `${x.reason} (line ${x.edit.range.startLine})` });
    if (r.applied.length && r.text !== before) {
      const secrets = r.replaced.filter((t, i) => secretEdits.has(r.applied[i]!) && t.length >= 4);
      plan.files.push({ path: rel, repoPath, before, after: r.text, applied: r.applied, secrets, dirty: working !== before });
    }
  }
  return plan;
}

function redactLiteral(s: string): string {
  const q = /^['"`]/.test(s) && s.endsWith(s[0]!) ? s[0]! : '';
  const inner = q ? s.slice(1, -1) : s;
  return `${q}${redact(inner)}${q}`;
}

function commitMessage(action: CodingAction, plan: CodingPlan): string {
  const head = action === 'fix' ? `cadre: fix ${plan.findings.length} finding${plan.findings.length === 1 ? '' : 's'}` : 'cadre: read hard-coded secrets from the environment';
  const lines = plan.findings.map((f) => `- ${f.ruleId} ${f.file}:${f.range?.startLine ?? 1}${f.fix?.description ? `: ${f.fix.description}` : ''}`);
  return `${head}\n\n${lines.join('\n')}\n`;
}

function makeCodingSkill(action: CodingAction): Skill {
  const plans = new WeakMap<Evidence, CodingPlan>();
  const kind = action === 'fix' ? 'code-fix' : 'refactor';
  // Deterministic per execution step: a resumed step finds the branch of its interrupted attempt.
  const branchOf = (ctx: SkillContext) => effectBranch(ctx.request.executionId, ctx.request.step, action);
  return {
    agentId: 'coder-ai',
    action,
    needs: ['workspace'],
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = workspaceOf(ctx);
      if (!ws) { evidence.constraints.push('no workspace folder'); return evidence; }
      const plan = await planEdits(ws, action, ctx.request.input, ctx.request.previous);
      plans.set(evidence, plan);
      if (!plan.repo) evidence.constraints.push('the workspace is not a git repository');
      else if (!plan.repo.head) evidence.constraints.push('the repository has no commit yet');
      for (const f of plan.findings) evidence.items.push({ source: `${f.file}:${f.range?.startLine ?? 1}`, detail: `${f.ruleId}: ${f.fix?.description ?? f.message}`, weight: 0.8 });
      for (const f of plan.files) {
        evidence.pathsRead.push(f.path);
        if (f.dirty) evidence.constraints.push(`${f.path} has uncommitted changes: the edits were applied to its HEAD version`);
      }
      for (const s of plan.skipped) evidence.constraints.push(`skipped ${s.file}: ${s.reason}`);
      ctx.progress(60);
      return evidence;
    },
    propose(ctx, evidence) {
      const plan = plans.get(evidence);
      if (!plan?.files.length) return [];
      const paths = plan.files.map((f) => f.path);
      const actions: ProposedAction[] = [
        { kind: 'write_file', description: `apply ${plan.files.reduce((n, f) => n + f.applied.length, 0)} edits to ${paths.length} files in a temporary git worktree`, paths },
        { kind: 'git_commit', description: `commit the edits on a new branch ${branchOf(ctx)} from HEAD (separate worktree; the current branch and uncommitted work stay untouched)`, paths },
      ];
      return actions;
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const ws = workspaceOf(ctx);
      const plan = plans.get(evidence) ?? (ws ? await planEdits(ws, action, ctx.request.input, ctx.request.previous) : undefined);
      const unable = (why: string, data: unknown = null): Artifact => ({ kind, summary: `coder-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data, unable: why });
      if (!ws || !plan) return unable('no workspace folder was given');
      if (!plan.repo) return unable('the workspace is not a git repository: the fix is only delivered as a commit on a new branch');
      if (!plan.repo.head) return unable('the repository has no commit to branch from');
      if (!plan.findings.length) {
        // No finding to fix is "nothing to do", not a failure of coder-ai: the step is skipped with its
        // reason and the execution goes on (outcome not_applicable, issue 10).
        const why = action === 'fix' ? 'no finding with a fix (input.findings or a previous step\'s data.findings)' : 'no hard-coded secret with an environment-read fix was found';
        return { kind, summary: `coder-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why };
      }
      if (!plan.files.length) return unable('none of the edits could be applied', { skipped: plan.skipped });
      const top = plan.repo.top;
      const before = await checkoutState(top);
      const commit = ctx.allowed('git_commit') && ctx.allowed('write_file');
      let branch: string | undefined;
      let commitSha: string | undefined;
      let diff: string;
      if (commit) {
        const name = branchOf(ctx);
        const trailer = effectTrailer(ctx.request.executionId, ctx.request.step);
        const worktree = plannedWorktree();
        const res = await ctx.once(`coder-ai:${action}:${ctx.request.executionId}:${ctx.request.step}`,
          () => commitOnNewBranch(top, { branch: name, trailer, worktree, files: plan.files.map((f) => ({ repoPath: f.repoPath, content: f.after })), message: commitMessage(action, plan), signal: ctx.signal }),
          { reconcile: () => findEffectBranch(top, name, trailer, ctx.signal), resources: [{ kind: 'worktree', repo: top, path: worktree }] });
        branch = res.branch; commitSha = res.commit; diff = res.diff;
      } else {
        diff = await proposalDiff(plan.files);
      }
      // The secrets a refactor removed appear on the diff's `-` lines: redact them in what leaves the step.
      for (const s of plan.files.flatMap((f) => f.secrets)) diff = diff.split(s).join(redactLiteral(s));
      const after = await checkoutState(top);
      const untouched = before.head === after.head && before.ref === after.ref && before.status === after.status;
      const stats = diffStats(diff);
      const changes: FileChange[] = plan.files.map((f) => {
        const s = stats.get(f.repoPath) ?? { added: 0, removed: 0 };
        return { path: f.path, kind: 'modify', content: f.after, linesAdded: s.added, linesRemoved: s.removed, applied: commit };
      });
      const applied = plan.files.reduce((n, f) => n + f.applied.length, 0);
      const ratio = plan.totalEdits ? Math.min(1, applied / plan.totalEdits) : 0;
      const dirty = plan.files.some((f) => f.dirty);
      const confidence = Math.round(Math.max(0.05, (0.35 + 0.6 * ratio) * (untouched ? 1 : 0.5) * (dirty ? 0.85 : 1)) * 100) / 100;
      const actionsTaken: ProposedAction[] = commit
        ? [
          { kind: 'write_file', description: `wrote ${changes.length} files in a temporary worktree (removed afterwards)`, paths: changes.map((c) => c.path) },
          { kind: 'git_commit', description: `committed ${commitSha?.slice(0, 12)} on new branch ${branch}`, paths: changes.map((c) => c.path) },
        ]
        : [];
      const what = `${applied} edits from ${plan.findings.length} findings in ${changes.length} files`;
      const summary = commit
        ? `${what} committed on new branch ${branch}; current branch untouched`
        : `${what} proposed as a diff: ACMF did not allow git_commit, no branch was created`;
      const artifact: Artifact = {
        kind, summary, goalRef, confidence,
        data: {
          mode: commit ? 'branch' : 'proposal',
          branch: branch ?? null,
          commit: commitSha ?? null,
          base: plan.repo.head,
          diff,
          // For the editor's diff preview and its Apply (written only when a person applies them).
          files: plan.files.map((f) => ({ path: f.path, beforeSha256: sha256(f.before), after: previewable(f.path, f.after) })),
          fixed: plan.findings.map((f) => ({ ruleId: f.ruleId, file: f.file, line: f.range?.startLine, fingerprint: f.fingerprint, fix: f.fix?.description })),
          skipped: plan.skipped,
          verification: { headBefore: before.head, headAfter: after.head, refBefore: before.ref, refAfter: after.ref, statusUnchanged: before.status === after.status, untouched },
          note: commit ? undefined : 'proposal only: ACMF did not allow the git_commit action, nothing was written',
        },
        text: diff,
        changes,
        actionsTaken,
        rollback: commit && branch ? { kind: 'branch', ref: branch } : { kind: 'none_needed', ref: '' },
        tokens: 0,
      };
      return artifact;
    },
  };
}

/** Largest file content kept in a step's output for the editor's preview; larger ones show as the diff only. */
export const PREVIEW_MAX_BYTES = 256 * 1024;

/**
 * The proposed content as the step may keep it in its output (and so in the store): not when it is
 * too large, and not when it still holds a secret (the diff, which is redacted, shows the change).
 */
export function previewable(file: string, after: string): string | null {
  if (Buffer.byteLength(after, 'utf8') > PREVIEW_MAX_BYTES) return null;
  return scanText(after, file).length > 0 ? null : after;
}

export const fixSkill: Skill = makeCodingSkill('fix');
export const refactorSkill: Skill = makeCodingSkill('refactor');
export const codingSkills: Skill[] = [fixSkill, refactorSkill];
/**
 * coder-ai generate needs a language model (Skill.requiresModel): without one it answers
 * ERR_SKILL_UNAVAILABLE as if it did not exist. Kept out of `codingSkills`, whose two model-free
 * skills the builtin module registers; builtin.ts adds this one next to them.
 */
export const generateSkill: Skill = makeGenerateSkill();
export const codingModelSkills: Skill[] = [generateSkill];
