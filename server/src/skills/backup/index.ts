/** backup-ai's embedded skills: `snapshot` (an archive with a SHA-256 manifest, written in the workspace) and `verify` (restore and check every hash). */
import type { Skill } from '../../engine/rigor/skill';
import { snapshotSkill, verifySkill } from './skill';

export * from './tar';
export * from './snapshot';
export * from './verify';
export * from './skill';
export * from './schemas';

export const backupSkills: Skill[] = [snapshotSkill, verifySkill];
