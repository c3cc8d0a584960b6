/** billing-ai's embedded skills [PRO]: `usage` (metering of Cadre's executions) and `analytics` (trends and a forecast), from the facts the engine hands in. */
import type { Skill } from '../../engine/rigor/skill';
import { analyticsSkill, usageSkill } from './skill';

export * from './usage';
export * from './analytics';
export * from './schemas';
export * from './skill';

export const billingSkills: Skill[] = [usageSkill, analyticsSkill];
