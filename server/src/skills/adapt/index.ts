/** adapt-ai's embedded skills [ULTRA]: `feedback` (a rating recorded by the engine) and `evaluate` (how feedback and outcomes changed each agent, with proposals). */
import type { Skill } from '../../engine/rigor/skill';
import { evaluateSkill } from './evaluate';
import { feedbackSkill } from './feedback';

export * from './schemas';
export * from './feedback';
export * from './evaluate';

export const adaptSkills: Skill[] = [feedbackSkill, evaluateSkill];
