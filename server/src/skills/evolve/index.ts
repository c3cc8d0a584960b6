/** evolve-ai's embedded skills: `assess` (maturity with evidence) and `plan` (improvements by value / effort). */
import type { Skill } from '../../engine/rigor/skill';
import { assessSkill, planSkill } from './skill';

export * from './assess';
export * from './criteria';
export * from './plan';
export * from './repo-index';
export * from './schemas';
export * from './skill';

export const evolveSkills: Skill[] = [assessSkill, planSkill];
