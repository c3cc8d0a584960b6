/** success-ai's embedded skills [ULTRA]: `health` (a tenant's health score) and `engagement` (weekly trends), from the facts the engine hands in. */
import type { Skill } from '../../engine/rigor/skill';
import { engagementSkill } from './engagement';
import { healthSkill } from './health';

export * from './schemas';
export * from './health';
export * from './engagement';

export const successSkills: Skill[] = [healthSkill, engagementSkill];
