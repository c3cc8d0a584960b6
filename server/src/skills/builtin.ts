/**
 * The embedded skills shipped with Cadre, as one skill module (bundled to dist/skills.js and loaded
 * into the agents' worker threads like any other module). Agents without an entry here say that they
 * have no embedded skill for an action yet.
 */
import type { Skill } from '../engine/rigor/skill';
import { architectureSkills } from './architecture/index';
import { codingModelSkills, codingSkills } from './coding/index';
import { debugSkills } from './debug/index';
import { deploySkills } from './deploy/index';
import { observeSkills } from './observe/index';
import { incidentSkills } from './incident/index';
import { maintainSkills } from './maintain/index';
import { capacitySkills } from './capacity/index';
import { backupSkills } from './backup/index';
import { optimizeSkills } from './optimize/index';
import { costSkills } from './cost/index';
import { dbaSkills } from './dba/index';
import { billingSkills } from './billing/index';
import { testingSkills } from './testing/index';
import { planningSkills } from './planning/index';
import { requirementSkills } from './requirements/index';
import { reviewSkills } from './review/index';
import { securitySkills } from './security/index';
import { threatSkills } from './threat/index';
import { governFactsSkills } from './govern/facts-index';
import { adaptSkills } from './adapt/index';
import { successSkills } from './success/index';
import { tenantSkills } from './tenant/index';
import { governComplianceSkills } from './govern/compliance-skill';
import { evolveSkills } from './evolve/index';
import { policySkills } from './policy/index';

export const skills: Skill[] = [...architectureSkills, ...codingSkills, ...codingModelSkills, ...requirementSkills, ...planningSkills, ...debugSkills, ...securitySkills, ...threatSkills, ...reviewSkills, ...testingSkills, ...deploySkills, ...observeSkills,
  ...incidentSkills, ...maintainSkills, ...capacitySkills, ...backupSkills, ...optimizeSkills, ...costSkills, ...dbaSkills, ...billingSkills, ...governComplianceSkills, ...evolveSkills,
  ...policySkills, ...governFactsSkills, ...adaptSkills, ...successSkills, ...tenantSkills];
