/** capacity-ai's embedded skills (issue 12). Until an action has one, the agent says it has no embedded skill for it. */
import type { Skill } from '../../engine/rigor/skill';

export const capacitySkills: Skill[] = [];
