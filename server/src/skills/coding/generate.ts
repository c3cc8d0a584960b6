/**
 * coder-ai `generate`: code for the task goal, written by the language model (the skill requires
 * one: without a model the action answers ERR_SKILL_UNAVAILABLE as before). The Research evidence
 * (goal, the files named in input.files, earlier steps) goes into the prompt; the answer is validated
 * with zod, every path must stay inside the workspace and every JS/TS/JSON file must parse (the
 * TypeScript parser review-ai uses). Output as coder-ai's other actions: a commit on a new branch in
 * a separate worktree when ACMF allows it, else the same diff as a proposal. An unusable answer
 * yields `unable` with the reason: there is no embedded code generator to fall back on, and nothing
 * is invented.
 *
 * The model drafts the code in Research, so that Inspect declares exactly the files the step will
 * write (ACMF rates those paths: a draft touching package.json or .cadre.yaml is rated as such, and a
 * person in LEARNING approves the real list), and Generate writes that draft and nothing else: what
 * it reports as done is what was declared, path for path.
 */
import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, FileChange, Skill, SkillContext } from '../../engine/rigor/skill';
import { askModel, evidenceText, rejected, type ModelNote } from '../../llm/skill-model';
import { diffStats, safeRelative } from './apply';
import { checkoutState, commitOnNewBranch, effectBranch, effectTrailer, findEffectBranch, plannedWorktree, proposalDiff, repoInfo, showHead, type RepoInfo } from './git';
import { checkCode } from './syntax';
import { WorkspaceFiles } from '../workspace/files';

const MAX_CONTEXT_FILE = 20_000;
const MAX_CONTEXT_FILES = 10;

const generatedSchema = z.object({
  files: z.array(z.object({
    path: z.string().trim().min(1).max(300),
    content: z.string().max(200_000),
  })).min(1).max(20),
  explanation: z.string().max(4000).optional(),
});

const GENERATE_SYSTEM = [
  'You are coder-ai. Write the code the goal asks for, consistent with the files and evidence given.',
  'Paths are relative to the workspace root. Give each file\'s complete new content. Never put credentials or keys in code: read them from the environment.',
  'Answer with JSON only: {"files":[{"path":"src/x.ts","content":"<the whole file>"}],"explanation":"<one paragraph>"}',
].join('\n');

interface Prepared {
  workspace?: string;
  repo?: RepoInfo;
  context: Map<string, string>;
}

/** The model's validated files (Research), or why its answer cannot be used. */
type Draft =
  | { ok: true; files: Array<{ path: string; content: string; parsed: boolean | null }>; explanation?: string; model: string; note: ModelNote }
  | { ok: false; why: string; note?: ModelNote };

/**
 * The draft travels on the evidence object itself (not only in a WeakMap): a worker that hands
 * Generate a copy of the evidence (structured clone) still hands it the very files Inspect declared.
 */
type DraftEvidence = Evidence & { draft?: Draft };

function workspaceOf(ctx: SkillContext): string | undefined {
  const ws = ctx.request.workspace;
  return ws && existsSync(ws) && statSync(ws).isDirectory() ? ws : undefined;
}

function namedFiles(input: Record<string, unknown>): string[] {
  const v = input['files'];
  const list = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  return list.filter((x): x is string => typeof x === 'string').map((f) => safeRelative(f)).filter((f): f is string => !!f).slice(0, MAX_CONTEXT_FILES);
}

/**
 * Asks the model for the code and validates it: every file a path inside the workspace, once, and
 * code that parses where a parser exists. The reasons of an unusable answer are the ones Generate
 * reports (the skill has no embedded code generator to fall back on).
 */
async function draftCode(ctx: SkillContext, evidence: Evidence, p: Prepared): Promise<Draft> {
  const files = [...p.context].map(([rel, text]) => `--- ${rel}\n${text}`).join('\n\n');
  const answer = await askModel(ctx, {
    system: GENERATE_SYSTEM,
    user: `Goal:\n${ctx.request.goal.prompt}\n\nInput: ${JSON.stringify(ctx.request.input).slice(0, 2000)}\n\n${evidenceText(evidence)}${files ? `\n\nCurrent files:\n${files}` : ''}`,
    schema: generatedSchema,
  });
  if (!answer) return { ok: false, why: 'no language model is configured (llm.provider); coder-ai has no embedded code generator' };
  if (!answer.ok) return { ok: false, why: `${answer.reason}; coder-ai has no embedded code generator, so nothing was generated`, note: answer.note };
  const seen = new Set<string>();
  const problems: string[] = [];
  const out: Array<{ path: string; content: string; parsed: boolean | null }> = [];
  for (const f of answer.value.files) {
    const rel = safeRelative(f.path);
    if (!rel) { problems.push(`${f.path}: outside the workspace`); continue; }
    if (seen.has(rel)) { problems.push(`${rel}: given twice`); continue; }
    seen.add(rel);
    const syntax = checkCode(rel, f.content);
    if (syntax && !syntax.ok) problems.push(syntax.reason);
    out.push({ path: rel, content: f.content.endsWith('\n') ? f.content : `${f.content}\n`, parsed: syntax ? syntax.ok : null });
  }
  if (problems.length) {
    const note = rejected(answer, `the generated code was rejected: ${problems.slice(0, 5).join('; ')}`);
    return { ok: false, why: `${note.fallback}; coder-ai has no embedded code generator, so nothing was generated`, note };
  }
  return { ok: true, files: out, ...(answer.value.explanation ? { explanation: answer.value.explanation } : {}), model: answer.model, note: answer.note };
}

/** The workspace and its repository, as Research found them (without the files' context). */
async function locate(ctx: SkillContext): Promise<Prepared> {
  const ws = workspaceOf(ctx);
  if (!ws) return { context: new Map() };
  const repo = await repoInfo(ws);
  return { workspace: ws, context: new Map(), ...(repo ? { repo } : {}) };
}

export function makeGenerateSkill(): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  // Deterministic per execution step: a resumed step finds the branch of its interrupted attempt.
  const branchOf = (ctx: SkillContext) => effectBranch(ctx.request.executionId, ctx.request.step, 'generate');
  return {
    agentId: 'coder-ai',
    action: 'generate',
    needs: ['workspace'],
    requiresModel: true,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const p: Prepared = { context: new Map() };
      prepared.set(evidence, p);
      if (ctx.request.goal.prompt.trim()) evidence.items.push({ source: 'goal prompt', detail: ctx.request.goal.prompt.slice(0, 600), weight: 0.5 });
      for (const prev of ctx.request.previous.slice(-5)) evidence.items.push({ source: `step ${prev.step} ${prev.agentId} ${prev.action}`, detail: prev.summary.slice(0, 600), weight: prev.passed ? 0.4 : 0.1 });
      const ws = workspaceOf(ctx);
      if (!ws) evidence.constraints.push('no workspace folder: the code can only be proposed');
      else {
        p.workspace = ws;
        const repo = await repoInfo(ws);
        if (repo) p.repo = repo;
        else evidence.constraints.push('the workspace is not a git repository: the code is proposed as a diff');
      }
      for (const rel of ws ? namedFiles(ctx.request.input) : []) {
        try {
          // Inside the workspace only (a symlink out or protected data is not read, and said so).
          const r = new WorkspaceFiles(ws!).readText(rel);
          if (!r.ok) { evidence.constraints.push(r.reason === 'not found' ? `${rel} does not exist yet` : `${rel}: ${r.reason}, not read`); continue; }
          const text = r.text;
          p.context.set(rel, text.slice(0, MAX_CONTEXT_FILE));
          evidence.pathsRead.push(rel);
          evidence.items.push({ source: rel, detail: `${text.split('\n').length} lines${text.length > MAX_CONTEXT_FILE ? ' (truncated in the prompt)' : ''}`, weight: 0.6 });
        } catch {
          evidence.constraints.push(`${rel} does not exist yet`);
        }
      }
      ctx.progress(50);
      const draft = await draftCode(ctx, evidence, p);
      (evidence as DraftEvidence).draft = draft;
      if (draft.ok) evidence.items.push({ source: `language model ${draft.model}`, detail: `drafted ${draft.files.length} file(s): ${draft.files.map((f) => f.path).join(', ').slice(0, 500)}`, weight: 0.3 });
      else evidence.constraints.push(draft.why);
      ctx.progress(90);
      return evidence;
    },
    propose(ctx, evidence) {
      const p = prepared.get(evidence);
      const draft = (evidence as DraftEvidence).draft;
      // Nothing to write (no usable draft), or nowhere to commit it (a proposal writes nothing).
      if (!p?.repo?.head || !draft?.ok) return [];
      const paths = draft.files.map((f) => f.path);
      const actions: ProposedAction[] = [
        { kind: 'write_file', description: `write ${paths.length} generated file(s) in a temporary git worktree: ${paths.join(', ').slice(0, 300)}`, paths },
        { kind: 'git_commit', description: `commit the generated code on a new branch ${branchOf(ctx)} from HEAD (separate worktree; the current branch and uncommitted work stay untouched)`, paths },
      ];
      return actions;
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      // A copy of the evidence (a worker's structured clone) is not in the WeakMap: find the repository again.
      const p = prepared.get(evidence) ?? await locate(ctx);
      const unable = (why: string, data: Record<string, unknown> = {}): Artifact => ({ kind: 'code', summary: `coder-ai generate: unable: ${why}`, goalRef, confidence: 0, data, unable: why });
      // The draft Inspect declared (drafted in Research); a copy of the evidence carries it too.
      const draft = (evidence as DraftEvidence).draft ?? await draftCode(ctx, evidence, p);
      if (!draft.ok) return unable(draft.why, draft.note ? { llm: draft.note } : {});
      const answer = { model: draft.model, note: draft.note, value: { explanation: draft.explanation } };
      const out = draft.files;
      ctx.progress(70);
      const ws = p.workspace;
      const repo = p.repo;
      const before = new Map<string, string>();
      for (const f of out) {
        let text: string | undefined;
        if (repo?.head) text = await showHead(repo.top, repo.prefix + f.path);
        else if (ws) { const r = new WorkspaceFiles(ws).readText(f.path); text = r.ok ? r.text : undefined; }
        if (text !== undefined) before.set(f.path, text);
      }
      const repoPath = (rel: string) => (repo ? repo.prefix : '') + rel;
      const commit = !!repo?.head && ctx.allowed('git_commit') && ctx.allowed('write_file');
      let branch: string | undefined;
      let commitSha: string | undefined;
      let diff: string;
      let untouched = true;
      if (commit && repo) {
        const stateBefore = await checkoutState(repo.top);
        const message = `cadre: generate code\n\n${ctx.request.goal.prompt.slice(0, 500)}\n`;
        const name = branchOf(ctx);
        const trailer = effectTrailer(ctx.request.executionId, ctx.request.step);
        const worktree = plannedWorktree();
        const res = await ctx.once(`coder-ai:generate:${ctx.request.executionId}:${ctx.request.step}`,
          () => commitOnNewBranch(repo.top, { branch: name, trailer, worktree, files: out.map((f) => ({ repoPath: repoPath(f.path), content: f.content })), message, signal: ctx.signal }),
          { reconcile: () => findEffectBranch(repo.top, name, trailer, ctx.signal), resources: [{ kind: 'worktree', repo: repo.top, path: worktree }] });
        branch = res.branch; commitSha = res.commit; diff = res.diff;
        const stateAfter = await checkoutState(repo.top);
        untouched = stateBefore.head === stateAfter.head && stateBefore.ref === stateAfter.ref && stateBefore.status === stateAfter.status;
      } else {
        diff = await proposalDiff(out.map((f) => ({ repoPath: repoPath(f.path), before: before.get(f.path) ?? '', after: f.content })));
      }
      const stats = diffStats(diff);
      const changes: FileChange[] = out.map((f) => {
        const s = stats.get(repoPath(f.path)) ?? { added: f.content.split('\n').length - 1, removed: 0 };
        return { path: f.path, kind: before.has(f.path) ? 'modify' : 'create', content: f.content, linesAdded: s.added, linesRemoved: s.removed, applied: commit };
      });
      // Confidence from evidence: what the prompt could build on, and how much of the output a parser verified.
      const support = evidence.items.reduce((n, i) => n + i.weight, 0);
      const verified = out.filter((f) => f.parsed === true).length / out.length;
      const confidence = Math.round(Math.max(0.05, (0.3 + 0.3 * Math.min(1, support / 2) + 0.3 * verified) * (untouched ? 1 : 0.5)) * 100) / 100;
      const summary = `${changes.length} file(s) generated by the language model (${answer.model})${commit ? `, committed on new branch ${branch}; current branch untouched` : ', proposed as a diff (no branch: ACMF did not allow git_commit or there is no git repository)'}`;
      const actionsTaken: ProposedAction[] = commit
        ? [
          { kind: 'write_file', description: `wrote ${changes.length} files in a temporary worktree (removed afterwards)`, paths: changes.map((c) => c.path) },
          { kind: 'git_commit', description: `committed ${commitSha?.slice(0, 12)} on new branch ${branch}`, paths: changes.map((c) => c.path) },
        ]
        : [];
      return {
        kind: 'code', summary, goalRef, confidence,
        data: {
          mode: commit ? 'branch' : 'proposal',
          branch: branch ?? null,
          commit: commitSha ?? null,
          base: repo?.head ?? null,
          files: out.map((f) => ({ path: f.path, parsed: f.parsed })),
          explanation: answer.value.explanation ?? null,
          diff,
          llm: answer.note,
        },
        text: `${answer.value.explanation ? `${answer.value.explanation}\n\n` : ''}${diff}`,
        changes,
        actionsTaken,
        ...(commit && branch ? { rollback: { kind: 'branch' as const, ref: branch } } : {}),
      };
    },
  };
}
