/** observe-ai's embedded skills: `analyze` (anomalies and SLO burn) and `alerts` (alert rules), both read-only. */
import type { Skill } from '../../engine/rigor/skill';
import { alertsSkill, analyzeSkill } from './skill';

export * from './model';
export * from './metrics-parse';
export * from './logs-parse';
export * from './detect';
export * from './alerts';
export * from './ingest';
export * from './skill';
export * from './schemas';

export const observeSkills: Skill[] = [analyzeSkill, alertsSkill];
