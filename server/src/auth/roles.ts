/**
 * Roles of API keys and who a caller is. Roles are ordered: `operator` runs work (tasks, workflows,
 * RIGOR, direct actions, cancel) and may lower an agent's ACMF mode; `approver` also decides ACMF
 * approvals and raises modes; `admin` also manages keys. A key stored before roles existed has no
 * `role` and counts as `admin` (see `ApiKeys.migrate`), so an upgrade takes no right away.
 */
export const ROLES = ['operator', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Readonly<Record<Role, number>> = { operator: 1, approver: 2, admin: 3 };

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** True when `has` includes the rights of `needs`. */
export function roleAtLeast(has: Role, needs: Role): boolean {
  return RANK[has] >= RANK[needs];
}

/** The role of a key record (absent = a key from before roles: admin). */
export function roleOf(record: { role?: Role | undefined }): Role {
  return record.role ?? 'admin';
}

/**
 * The authenticated caller as the audit trail names it: `key:<id>` for a bearer key,
 * `key:<id>/session:<first 12 hex of the session id>` for a session cookie (the session id is a
 * hash of the token, so naming part of it reveals nothing). Never anything the client wrote.
 */
export function actorOf(keyId: string, session?: { id: string } | null): string {
  return session ? `key:${keyId}/session:${session.id.slice(0, 12)}` : `key:${keyId}`;
}

/** The separation-of-duties rule lives with ACMF (one implementation for every door); re-exported for the doors. */
export { SELF_APPROVAL_RISKS, selfApprovalAllowed } from '../engine/acmf/separation-of-duties';
