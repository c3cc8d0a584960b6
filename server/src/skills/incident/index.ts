/** incident-ai's embedded skills (issue 12): `triage` (severity, routing, escalation, timeline) and `postmortem` (the markdown document), both read-only. */
import type { Skill } from '../../engine/rigor/skill';
import { postmortemSkill, triageSkill } from './skill';

export * from './signals';
export * from './triage';
export * from './postmortem';
export * from './skill';
export * from './schemas';

export const incidentSkills: Skill[] = [triageSkill, postmortemSkill];
