/** policy-ai's embedded skills: `check` (read-only) and `enforce` (fixes written under ACMF, or proposed). */
import type { Skill } from '../../engine/rigor/skill';
import { checkSkill, enforceSkill } from './skill';

export { BASELINE_RULES, type BaselineRule } from './rules';
export { checkTexts, collectFiles, readSettings, type CheckReport, type PolicySettings } from './check';
export { planFixes } from './enforce';
export { checkSkill, enforceSkill } from './skill';

export const policySkills: Skill[] = [checkSkill, enforceSkill];
