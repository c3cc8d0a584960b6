/**
 * The host's side of the PR pipeline, as executions of the agents themselves:
 *  - review: review-ai `review` in a temporary detached worktree at the PR's commit with `base` = the
 *    commit it started from, so review-ai reads exactly the PR's diff (never the user's working tree);
 *  - staging: deploy-ai `deploy` with environment `staging` on the workspace (its configured command;
 *    deploy-ai's own ACMF mode decides whether it runs, asks for approval or only observes);
 *  - incident fix: coder-ai through RIGOR with the incident's summary as the prompt (its execution's
 *    end continues the chain; see engine/pr-flow/triggers.ts).
 * Review and staging wait for their execution to end (the PR flow records the result).
 */
import * as path from 'node:path';
import type { Engine } from '../../engine/index';
import type { ExecutionRecord } from '../../engine/executions/records';
import { isEngineError } from '../../engine/errors';
import type { PullReviewer, StagingDeployer } from '../../engine/pr-flow/ports';
import type { IncidentFixer } from '../../engine/pr-flow/triggers';
import { plannedWorktree, releaseWorktrees } from '../../skills/coding/git';
import { gitOut } from '../../skills/workspace/git';

const SYSTEM = { keyId: null, callbackSecret: null };

/** Resolves with the execution once it ended (completed, failed or cancelled). */
export async function untilEnded(engine: Engine, id: string, timeoutMs = 30 * 60_000): Promise<ExecutionRecord> {
  try {
    return await engine.executions.whenSettled(id, { timeoutMs });
  } catch (err) {
    if (isEngineError(err) && err.code === 'ERR_TIMEOUT') throw new Error(`execution ${id} did not end within ${Math.round(timeoutMs / 60_000)} min`);
    throw err;
  }
}

export function reviewAiReviewer(engine: Engine, defaultWorkspace: () => string | undefined): PullReviewer {
  return {
    async review({ local, pull }) {
      const workspace = local.source ?? defaultWorkspace();
      if (!workspace) throw new Error('no workspace to review the pull request in');
      const top = (await gitOut(workspace, ['rev-parse', '--show-toplevel'])).trim();
      const wt = plannedWorktree();
      await gitOut(top, ['worktree', 'add', '--detach', wt, local.commit]);
      try {
        const ex = await engine.executions.runAction('review-ai', 'review', {
          prompt: `review pull request #${pull.number} (${pull.branch})`, source: wt, input: { base: local.base ?? `${local.commit}^` },
        }, SYSTEM);
        const done = await untilEnded(engine, ex.id);
        const step = done.steps.at(-1);
        const data = (step?.output ?? {}) as { findings?: unknown[]; counts?: Record<string, number> };
        const findings = Array.isArray(data.findings) ? data.findings.length : 0;
        const passed = done.status === 'completed' && step?.passed !== false && step?.outcome !== 'failed' && step?.outcome !== 'error';
        return { passed, summary: step?.summary ?? step?.reason ?? done.error?.message ?? done.status, executionId: done.id, findings };
      } finally {
        await releaseWorktrees([{ kind: 'worktree', repo: top, path: wt }]).catch(() => undefined);
      }
    },
  };
}

export function deployAiStaging(engine: Engine, defaultWorkspace: () => string | undefined): StagingDeployer {
  return {
    async deploy({ local, pull }) {
      const workspace = local.source ?? defaultWorkspace();
      if (!workspace) throw new Error('no workspace to deploy from');
      const ex = await engine.executions.runAction('deploy-ai', 'deploy', {
        prompt: `deploy pull request #${pull.number} (${pull.branch}) to staging`, source: path.resolve(workspace), input: { environment: 'staging' },
      }, SYSTEM);
      const done = await untilEnded(engine, ex.id);
      return { executionId: done.id, status: done.steps.at(-1)?.outcome ?? done.status };
    },
  };
}

export function coderAiFixer(engine: Engine, defaultWorkspace: () => string | undefined): IncidentFixer {
  return {
    async fix({ incidentId, summary, source }) {
      const workspace = source ?? defaultWorkspace();
      const ex = await engine.executions.invokeRigor('coder-ai', {
        prompt: `fix incident ${incidentId}: ${summary}`, ...(workspace ? { source: workspace } : {}),
      }, SYSTEM);
      return { executionId: ex.id };
    },
  };
}
