/** govern-ai's skills over engine facts: `audit-trail` and `approval` (compliance lives beside them, compliance*.ts). */
import type { Skill } from '../../engine/rigor/skill';
import { approvalSkill } from './approval';
import { auditTrailSkill } from './audit-trail';

export { approvalSkill, approvalReport, renderApprovals, type ApprovalData } from './approval';
export { auditTrailSkill, auditTrailReport, renderAuditTrail, type AuditTrailData } from './audit-trail';

export const governFactsSkills: Skill[] = [auditTrailSkill, approvalSkill];
