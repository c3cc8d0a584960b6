/** maintain-ai's embedded skills: `health` and `dependencies` (read-only) and `fix` (one batch on a new branch, or a proposed diff). */
import type { Skill } from '../../engine/rigor/skill';
import { dependenciesSkill, fixSkill, healthSkill } from './skill';

export * from './manifests';
export * from './health';
export * from './registry';
export * from './plan';
export * from './skill';
export * from './schemas';

export const maintainSkills: Skill[] = [healthSkill, dependenciesSkill, fixSkill];
