/** optimize-ai's embedded skills [PRO]: `analyze` (hot spots of CPU profiles) and `benchmark` (a command timed N times against a baseline). */
import type { Skill } from '../../engine/rigor/skill';
import { analyzeSkill, benchmarkSkill } from './skill';

export * from './profile';
export * from './benchmark';
export * from './prof-process';
export { analyzeSkill as optimizeAnalyzeSkill, benchmarkSkill, hotSpotsOf, loadProfiles, renderBench, renderProfiles, PROFILE_LOOKED_AT, type AnalyzeProfileData, type HotSpot } from './skill';
export * from './schemas';

export const optimizeSkills: Skill[] = [analyzeSkill, benchmarkSkill];
