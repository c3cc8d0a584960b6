/** tenant-ai's skills: the boundary proven through the API, and usage against quotas. */
import type { Skill } from '../../engine/rigor/skill';
import { checkIsolationSkill } from './check-isolation';
import { quotasSkill } from './quotas';

export const tenantSkills: Skill[] = [checkIsolationSkill, quotasSkill];
