/** cost-ai's embedded skills [PRO]: `report` (breakdown of a billing export) and `optimize` (waste, rightsizing, reserved break-even), both read-only. */
import type { Skill } from '../../engine/rigor/skill';
import { optimizeSkill, reportSkill } from './skill';

export * from './csv';
export * from './formats';
export * from './load';
export * from './report';
export * from './optimize';
export * from './schemas';
export * from './skill';

export const costSkills: Skill[] = [reportSkill, optimizeSkill];
