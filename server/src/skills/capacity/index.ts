/** capacity-ai's embedded skills (issue 12): `forecast` (linear vs Holt-Winters on a held-out tail, saturation) and `recommend` (scaling), both read-only. */
import type { Skill } from '../../engine/rigor/skill';
import { forecastSkill, recommendSkill } from './skill';

export * from './forecast';
export * from './series';
export * from './plan';
export * from './skill';
export * from './schemas';

export const capacitySkills: Skill[] = [forecastSkill, recommendSkill];
