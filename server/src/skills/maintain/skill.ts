/**
 * maintain-ai's embedded skills, deterministic (no model):
 *
 *  - `health` (the verb `maintain`): lock-file drift and engines mismatch (health.ts), read-only.
 *  - `dependencies`: outdated and deprecated direct npm dependencies against registry metadata
 *    (`input.registry` files, or registry.npmjs.org when ACMF allows `http_request`) and the update
 *    plan in safe batches (plan.ts), read-only.
 *  - `fix`: applies one batch (`input.batch`: patch by default) to package.json as a commit on a new
 *    branch made in a temporary worktree (coder-ai's helpers, through the side-effect ledger), or
 *    proposes the diff (`applied: false`) when ACMF does not allow write_file and git_commit or there
 *    is no git repository. The lock file is not regenerated (that needs the package manager and the
 *    network): the result says so.
 *
 * Findings (drift, outdated packages) are findings of the project, never a failed gate of the step.
 */
import { existsSync } from 'node:fs';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, FileChange, Skill, SkillContext } from '../../engine/rigor/skill';
import { WorkspaceFiles } from '../workspace/files';
import { checkoutState, commitOnNewBranch, effectBranch, effectTrailer, findEffectBranch, plannedWorktree, proposalDiff, repoInfo, showHead, type RepoInfo } from '../coding/git';
import { checkHealth, comparableRange, manifestDir, readNpmLock, readText, SEVERITY_RANK, type HealthReport } from './health';
import { ManifestError, parsePackageJson, type NpmLock, type PackageJson } from './manifests';
import { applyBatch, BUMPS, planUpdates, type Batch, type Bump, type DependencyPlan } from './plan';
import { fetchPackuments, readRegistryInput, REGISTRY_URL, type Packument } from './registry';
import { dependenciesDataSchema, fixDataSchema, healthDataSchema } from './schemas';
import { maintainInputSchema } from '../operate-inputs';

export const HEALTH_LOOKED_AT = 'package.json, package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml, .nvmrc, .node-version, requirements.txt, poetry.lock, go.mod, go.sum';

type Action = 'health' | 'dependencies' | 'fix';

interface Prepared {
  dir: string;
  health?: HealthReport;
  pkg?: PackageJson;
  lock?: NpmLock;
  /** From input.registry. */
  registry?: { packuments: Map<string, Packument>; files: string[] };
  /** Bad input: the field and the message naming file and line. */
  problem?: { field: string; message: string };
  /** fix: the workspace is in a git repository with a commit (else the diff can only be proposed). */
  committable?: boolean;
}

function prepare(ctx: SkillContext, action: Action): Prepared {
  const ws = new WorkspaceFiles(ctx.request.workspace!);
  const dir = manifestDir(ctx.request.input['path']);
  if (typeof dir !== 'string') return { dir: '', problem: { field: 'path', message: dir.error } };
  const p: Prepared = { dir };
  const ref = ws.resolve(dir || '.');
  if (!ref.ok) return { dir, problem: { field: 'path', message: ref.reason === 'not found' ? `input.path: ${dir} does not exist in the workspace` : `input.path: ${dir} is ${ref.reason}; not read` } };
  try {
    if (action === 'health') { p.health = checkHealth(ws, dir); return p; }
    const f = readText(ws, dir + 'package.json');
    if (!f) return p;
    p.pkg = parsePackageJson(f.rel, f.text);
    const lock = readNpmLock(ws, dir);
    if (lock) p.lock = lock;
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    return { ...p, problem: { field: 'path', message: e.message } };
  }
  const raw = ctx.request.input['registry'];
  if (raw !== undefined && raw !== null && raw !== '') {
    try {
      const r = readRegistryInput(ws, raw);
      if ('error' in r) return { ...p, problem: { field: 'registry', message: r.error } };
      p.registry = r;
    } catch (e) {
      if (!(e instanceof ManifestError)) throw e;
      return { ...p, problem: { field: 'registry', message: e.message } };
    }
  }
  return p;
}

function healthLine(h: HealthReport): string {
  return `${h.examined.files.length} file(s) (${h.examined.files.join(', ')}), ${h.examined.directDependencies} direct dependencies, node ${h.node.running}${h.node.engines ? ` against engines.node ${h.node.engines}` : ''}`;
}

export function renderHealth(h: HealthReport): string {
  const out = ['# maintain-ai health', '', `Examined: ${healthLine(h)}.`, ''];
  if (!h.findings.length) out.push('No drift and no engines mismatch found.', '');
  else {
    out.push('| severity | kind | where | message |', '|---|---|---|---|');
    for (const f of h.findings) out.push(`| ${f.severity} | ${f.kind} | ${f.file}${f.line ? `:${f.line}` : ''} | ${f.message.replace(/\|/g, '\\|')} |`);
    out.push('');
  }
  if (h.examined.notCompared.length) out.push('## Not compared', '', ...h.examined.notCompared.map((n) => `- ${n}`), '');
  out.push('The running node is the one Cadre runs on; CI and production may use another.');
  return out.join('\n');
}

export function renderPlan(plan: DependencyPlan, registryFrom: string): string {
  const out = ['# maintain-ai dependencies', '', `Registry metadata: ${registryFrom}.`, ''];
  const rows = plan.dependencies.filter((d) => d.outdated || d.deprecated);
  if (!rows.length) out.push(`All ${plan.dependencies.length} judged dependencies are current and none is deprecated.`, '');
  else {
    out.push('| package | where | current | wanted | latest | deprecated |', '|---|---|---|---|---|---|');
    for (const d of rows) out.push(`| ${d.name} | ${d.file}:${d.line ?? '?'} | ${d.current} | ${d.wanted ?? '-'} | ${d.latest ?? '-'} | ${d.deprecated ? d.deprecated.replace(/\|/g, '\\|') : ''} |`);
    out.push('');
  }
  for (const b of plan.batches) {
    out.push(`## ${b.bump} batch`, '', `Risk: ${b.risk}.`, '', ...b.updates.map((u) => `- ${u.name} ${u.from} -> ${u.to} (${u.file}:${u.line ?? '?'}: ${u.range}${u.newRange ? ` -> ${u.newRange}` : ', left as is'})`), '');
  }
  if (plan.notJudged.length) out.push('## Not judged', '', ...plan.notJudged.map((n) => `- ${n}`));
  return out.join('\n');
}

/** Confidence from how much of the input could be judged: complete deterministic input is 0.9. */
export function coverageConfidence(judged: number, total: number): number {
  if (!total) return 0.9;
  return Math.round(0.9 * (0.5 + 0.5 * (judged / total)) * 100) / 100;
}

/** The packages worth asking the registry about: those with a version range (not git, file:, workspace:, aliases). */
function npmNames(p: Prepared): string[] {
  return [...new Set((p.pkg?.deps ?? []).filter((d) => comparableRange(d.range)).map((d) => d.name))];
}

/** `input.online: false` keeps the step off the network (then only input.registry can give metadata). */
function offline(ctx: SkillContext): boolean {
  const v = ctx.request.input['online'];
  return v === false || v === 'false';
}

/** Registry metadata from the files, else fetched when allowed; else why not. */
async function packumentsFor(ctx: SkillContext, p: Prepared): Promise<{ packuments: Map<string, Packument>; from: string; missing: string[] } | { unable: string; field?: string }> {
  if (p.registry) return { packuments: p.registry.packuments, from: p.registry.files.join(', '), missing: [] };
  if (offline(ctx)) return { unable: 'no registry metadata: give input.registry (a workspace file of npm packuments); input.online is false, so the registry is not asked', field: 'registry' };
  if (!ctx.allowed('http_request')) return { unable: `no registry metadata: give input.registry (a workspace file of npm packuments) or let ACMF allow http_request to ${REGISTRY_URL}`, field: 'registry' };
  const names = npmNames(p);
  const r = await fetchPackuments(names, ctx.signal);
  if (r.failed) return { unable: `the npm registry could not be read (${r.failed}); no version was guessed: give input.registry instead`, field: 'registry' };
  return { packuments: r.packuments, from: `${REGISTRY_URL} (${r.packuments.size} fetched${r.missing.length ? `, unknown to it: ${r.missing.join(', ')}` : ''})`, missing: r.missing };
}

function planFindings(plan: DependencyPlan): { count: number; maxSeverity: number } {
  const deprecated = plan.dependencies.filter((d) => d.deprecated).length;
  const majors = plan.dependencies.filter((d) => d.outdated && d.targets.major).length;
  const outdated = plan.dependencies.filter((d) => d.outdated).length;
  return { count: outdated + plan.dependencies.filter((d) => d.deprecated && !d.outdated).length, maxSeverity: deprecated || majors ? SEVERITY_RANK.medium : outdated ? SEVERITY_RANK.low : 0 };
}

function makeMaintainSkill(action: Action): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  const kind = `maintain-${action}`;
  const branchOf = (ctx: SkillContext) => effectBranch(ctx.request.executionId, ctx.request.step, 'fix');
  return {
    agentId: 'maintain-ai',
    action,
    inputSchema: maintainInputSchema,
    needs: ['workspace'],
    outputSchema: action === 'health' ? healthDataSchema : action === 'dependencies' ? dependenciesDataSchema : fixDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to read manifests from'); return evidence; }
      const p = prepare(ctx, action);
      if (action === 'fix' && p.pkg && !p.problem) p.committable = !!(await repoInfo(ws))?.head;
      prepared.set(evidence, p);
      const files = p.health?.examined.files ?? [...(p.pkg ? [p.pkg.file] : []), ...(p.lock ? [p.lock.file] : []), ...(p.registry?.files ?? [])];
      for (const f of files) evidence.items.push({ source: f, detail: 'manifest, lock or registry metadata read', weight: 0.8 });
      evidence.pathsRead.push(...files);
      if (p.problem) evidence.constraints.push(p.problem.message);
      ctx.progress(40, files.length ? 0.6 : 0.3);
      return evidence;
    },
    propose(ctx, evidence) {
      const p = prepared.get(evidence);
      if (!p || p.problem) return [];
      const files = p.health?.examined.files ?? [...(p.pkg ? [p.pkg.file] : []), ...(p.lock ? [p.lock.file] : []), ...(p.registry?.files ?? [])];
      const out: ProposedAction[] = files.length ? [{ kind: 'read', description: 'read the manifests and lock files', paths: files }] : [];
      if (action === 'health' || !p.pkg?.deps.length) return out;
      if (!p.registry && !offline(ctx)) out.push({ kind: 'http_request', description: `fetch the packuments of ${npmNames(p).length} package(s) from ${REGISTRY_URL} (read-only GET)` });
      // Only what will run: without a repository and a commit the batch is proposed as a diff, nothing written.
      if (action === 'fix' && p.committable) {
        out.push({ kind: 'write_file', description: `raise the ranges of one ${String(ctx.request.input['batch'] ?? 'patch')} batch in ${p.pkg.file}, in a temporary git worktree`, paths: [p.pkg.file] });
        out.push({ kind: 'git_commit', description: `commit it on a new branch ${branchOf(ctx)} from HEAD (separate worktree; the current branch and uncommitted work stay untouched)`, paths: [p.pkg.file] });
      }
      return out;
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `maintain-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) return unable('no workspace was given to read manifests from');
      const p = prepared.get(evidence) ?? prepare(ctx, action);
      if (p.problem) return unable(p.problem.message, p.problem.field);
      if (action === 'health') {
        const h = p.health!;
        if (!h.examined.files.length) {
          const why = `no manifest, lock file or node version pin to check: looked for ${HEALTH_LOOKED_AT} in ${p.dir || 'the workspace root'}`;
          return { kind, summary: `maintain-ai health: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
        }
        const total = h.examined.directDependencies + (h.node.engines ? 1 : 0);
        const confidence = coverageConfidence(Math.max(0, total - h.examined.notCompared.length), total);
        ctx.progress(100, confidence);
        const n = h.findings.length;
        const summary = n
          ? `${n} finding(s): ${h.findings.slice(0, 3).map((f) => `${f.kind} ${f.file}${f.line ? `:${f.line}` : ''}${f.package ? ` (${f.package})` : ''}`).join('; ')}${n > 3 ? `; and ${n - 3} more` : ''} (examined ${healthLine(h)})`
          : `nothing found: no lock-file drift and no engines mismatch; examined ${healthLine(h)}`;
        return {
          kind, summary, goalRef, confidence, data: h, text: renderHealth(h), tokens: 0,
          findingsAfter: { count: n, maxSeverity: n ? Math.max(...h.findings.map((f) => SEVERITY_RANK[f.severity])) : 0 },
        };
      }
      if (!p.pkg) {
        const why = `no package.json in ${p.dir || 'the workspace root'}: the dependency plan covers npm projects (use health for requirements.txt, poetry.lock and go.mod drift)`;
        return { kind, summary: `maintain-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      if (!p.pkg.deps.length) {
        const why = `${p.pkg.file} declares no dependencies`;
        return { kind, summary: `maintain-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const reg = await packumentsFor(ctx, p);
      if ('unable' in reg) {
        // Inside a domain workflow (OPERATE's fix stage) nobody gave this step its input: without registry
        // metadata there is nothing it can judge, so it steps aside instead of stopping the workflow.
        const wf = ctx.request.goal.workflow;
        if (wf) {
          const why = `${reg.unable} (step of the ${wf} workflow: nothing to update without registry metadata)`;
          return { kind, summary: `maintain-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
        }
        return unable(reg.unable, reg.field);
      }
      const plan = planUpdates(p.pkg, p.lock, reg.packuments);
      const judged = plan.dependencies.length;
      const confidence = coverageConfidence(judged, p.pkg.deps.length);
      ctx.progress(70, confidence);
      if (action === 'dependencies') {
        const outdated = plan.dependencies.filter((d) => d.outdated);
        const deprecated = plan.dependencies.filter((d) => d.deprecated);
        const summary = `${outdated.length} outdated and ${deprecated.length} deprecated of ${judged} judged direct dependencies${deprecated.length ? ` (deprecated: ${deprecated.map((d) => `${d.name}@${d.current} ${d.file}:${d.line ?? '?'}`).join(', ')})` : ''}; plan: ${plan.batches.map((b) => `${b.bump} ${b.updates.length}`).join(', ') || 'nothing to update'}${plan.notJudged.length ? `; ${plan.notJudged.length} not judged` : ''}`;
        return {
          kind, summary, goalRef, confidence, tokens: 0,
          data: { ...plan, registry: reg.from, lockFile: p.lock?.file ?? null }, text: renderPlan(plan, reg.from),
          findingsAfter: planFindings(plan),
        };
      }
      return fixBatch(ctx, p, plan, reg.from, confidence, kind, branchOf(ctx));
    },
  };
}

async function fixBatch(ctx: SkillContext, p: Prepared, plan: DependencyPlan, registryFrom: string, confidence: number, kind: string, branchName: string): Promise<Artifact> {
  const goalRef = ctx.request.goal.id;
  const raw = ctx.request.input['batch'] ?? 'patch';
  if (typeof raw !== 'string' || !BUMPS.includes(raw as Bump)) {
    const why = `input.batch must be one of ${BUMPS.join(', ')}`;
    return { kind, summary: `maintain-ai fix: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, needsInput: { field: 'batch' }, tokens: 0 };
  }
  const bump = raw as Bump;
  const batch = plan.batches.find((b) => b.bump === bump);
  const pkg = p.pkg!;
  if (!batch) {
    return {
      kind, summary: `nothing to apply: the ${bump} batch is empty (${plan.dependencies.length} dependencies judged; batches: ${plan.batches.map((b) => `${b.bump} ${b.updates.length}`).join(', ') || 'none'})`,
      goalRef, confidence, tokens: 0, data: { mode: 'none', batch: bump, plan, registry: registryFrom, branch: null, commit: null, diff: '' },
    };
  }
  const ws = ctx.request.workspace!;
  const repo: RepoInfo | undefined = await repoInfo(ws);
  const repoPath = (repo?.prefix ?? '') + pkg.file;
  // The edit is made on the committed manifest when there is one: the user's uncommitted edits never ride along.
  const headText = repo?.head ? await showHead(repo.top, repoPath) : undefined;
  const baseText = headText ?? pkg.text;
  const basePkg = headText !== undefined ? parsePackageJson(pkg.file, headText) : pkg;
  const rebased: Batch = {
    ...batch,
    updates: batch.updates.map((u) => {
      const d = basePkg.deps.find((x) => x.name === u.name);
      return { ...u, line: d?.line ?? null, range: d?.range ?? u.range };
    }),
  };
  const edit = applyBatch(baseText, rebased);
  if (!edit.applied.length) {
    return { kind, summary: `nothing applied: ${edit.skipped.join('; ')}`, goalRef, confidence: Math.min(confidence, 0.6), tokens: 0, data: { mode: 'none', batch: bump, plan, registry: registryFrom, skipped: edit.skipped, branch: null, commit: null, diff: '' } };
  }
  const commit = !!repo?.head && ctx.allowed('write_file') && ctx.allowed('git_commit');
  let branch: string | null = null;
  let sha: string | null = null;
  let diff: string;
  let untouched = true;
  const lockNote = `the lock file is not regenerated: run \`npm install\` (or yarn / pnpm) on the branch to refresh ${p.lock?.file ?? 'it'}`;
  if (commit && repo) {
    const before = await checkoutState(repo.top);
    const trailer = effectTrailer(ctx.request.executionId, ctx.request.step);
    const worktree = plannedWorktree();
    const message = `chore(deps): ${bump} updates: ${edit.applied.map((u) => `${u.name} ${u.to}`).join(', ')}\n\nmaintain-ai fix, ${bump} batch. Risk: ${batch.risk}.\nNote: ${lockNote}.\n`;
    const res = await ctx.once(`maintain-ai:fix:${ctx.request.executionId}:${ctx.request.step}`,
      () => commitOnNewBranch(repo.top, { branch: branchName, trailer, worktree, files: [{ repoPath, content: edit.text }], message, signal: ctx.signal }),
      { reconcile: () => findEffectBranch(repo.top, branchName, trailer, ctx.signal), resources: [{ kind: 'worktree', repo: repo.top, path: worktree }] });
    branch = res.branch; sha = res.commit; diff = res.diff;
    const after = await checkoutState(repo.top);
    untouched = before.head === after.head && before.ref === after.ref && before.status === after.status;
  } else {
    diff = await proposalDiff([{ repoPath, before: baseText, after: edit.text }]);
  }
  const added = diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length;
  const removed = diff.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---')).length;
  const changes: FileChange[] = [{ path: pkg.file, kind: 'modify', content: edit.text, linesAdded: added, linesRemoved: removed, applied: commit }];
  const list = edit.applied.map((u) => `${u.name} ${u.from} -> ${u.to}`).join(', ');
  const summary = commit
    ? `${bump} batch applied on new branch ${branch} (${sha?.slice(0, 12)}): ${list}; current branch untouched; ${lockNote}`
    : `${bump} batch proposed as a diff, nothing written (${repo?.head ? 'ACMF did not allow write_file and git_commit' : 'the workspace is not a git repository with a commit'}): ${list}`;
  return {
    kind, summary, goalRef, confidence: untouched ? confidence : Math.round(confidence * 50) / 100, tokens: 0,
    data: { mode: commit ? 'branch' : 'proposal', batch: bump, risk: batch.risk, applied: edit.applied, skipped: edit.skipped, branch, commit: sha, base: repo?.head ?? null, diff, lockNote, registry: registryFrom, plan },
    text: `# maintain-ai fix: ${bump} batch\n\nRisk: ${batch.risk}.\n\n${lockNote}.\n\n\`\`\`diff\n${diff}\`\`\`\n`,
    changes,
    actionsTaken: commit
      ? [
        { kind: 'write_file', description: `raised ${edit.applied.length} range(s) in ${pkg.file} in a temporary worktree (removed afterwards)`, paths: [pkg.file] },
        { kind: 'git_commit', description: `committed ${sha?.slice(0, 12)} on new branch ${branch}`, paths: [pkg.file] },
      ]
      : [],
    ...(commit && branch ? { rollback: { kind: 'branch' as const, ref: branch } } : {}),
  };
}

export const healthSkill: Skill = makeMaintainSkill('health');
export const dependenciesSkill: Skill = makeMaintainSkill('dependencies');
export const fixSkill: Skill = makeMaintainSkill('fix');
