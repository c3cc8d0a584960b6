/** deploy-ai's embedded skills: `readiness`, `plan` (read-only) and `deploy` (runs the deploy command once, when ACMF allows). */
import type { Skill } from '../../engine/rigor/skill';
import { deploySkill } from './deploy';
import { planSkill } from './plan';
import { readinessSkill } from './readiness';

export * from './readiness';
export * from './facts';
export * from './command';
export * from './plan';
export * from './deploy';

export const deploySkills: Skill[] = [readinessSkill, planSkill, deploySkill];
