/** dba-ai's embedded skills [PRO]: `analyze-queries` (SQL anti-patterns and N+1 in code) and `indexes` (suggestions against the schema), both read-only. */
import type { Skill } from '../../engine/rigor/skill';
import { analyzeQueriesSkill, indexesSkill } from './skill';

export * from './sql';
export * from './schema';
export * from './checks';
export * from './code';
export * from './indexes';
export * from './load';
export * from './skill';
export * from './schemas';

export const dbaSkills: Skill[] = [analyzeQueriesSkill, indexesSkill];
