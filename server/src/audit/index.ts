/** The audit trail adapter (JSON Lines, one file per UTC day, hash-chained). */
export {
  auditFileName,
  listAuditDays,
  openAuditTrail,
  readAuditLines,
  verifyAuditDir,
  type AuditLine,
  type AuditOpenWarning,
  type AuditQuery,
  type JsonlAuditTrail,
  type OpenAuditTrailOptions,
} from './jsonl-audit-trail';
