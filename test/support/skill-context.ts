/**
 * A skill's context for unit tests that call a skill directly (no pipeline), and its run through
 * research → propose → generate → optimize as the pipeline orders them.
 */
import type { Artifact, Evidence, Skill, SkillContext, StepRequest } from '../../server/src/engine/rigor/skill';
import type { ProposedAction } from '../../server/src/engine/acmf/records';

export interface SkillContextOptions {
  agentId: string;
  action: string;
  workspace?: string | undefined;
  /** Intelligence tier as the step gives it (tests also pass unknown tiers on purpose). */
  tier?: string;
  input?: Record<string, unknown>;
  prompt?: string;
  allowed?: (kind: string) => boolean;
  signal?: AbortSignal;
}

export function skillContext(o: SkillContextOptions): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 0, agentId: o.agentId, action: o.action, goal: { id: 'g1', prompt: o.prompt ?? `${o.agentId} ${o.action}` },
    input: o.input ?? {}, scope: 'mvp', tier: (o.tier ?? 'core') as StepRequest['tier'], previous: [], ...(o.workspace ? { workspace: o.workspace } : {}),
  };
  return { request, signal: o.signal ?? new AbortController().signal, progress() {}, allowed: o.allowed ?? (() => true), once: (_k, fn) => fn() };
}

export interface SkillRun { evidence: Evidence; proposed: ProposedAction[]; generated: Artifact; artifact: Artifact }

/** The four phases a skill takes part in; `artifact` is after Optimize when the skill has one. */
export async function runSkill(skill: Skill, c: SkillContext): Promise<SkillRun> {
  const evidence = await skill.research(c);
  const proposed = await skill.propose(c, evidence);
  const generated = await skill.generate(c, evidence);
  const artifact = skill.optimize ? (await skill.optimize(c, generated, [])).artifact : generated;
  return { evidence, proposed, generated, artifact };
}
