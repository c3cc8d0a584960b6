/** The Inspect proposal of a skill that only reads: one `read` action over the paths Research read. */
import type { ProposedAction } from '../engine/acmf/records';
import type { Evidence } from '../engine/rigor/skill';

export function proposeReads(evidence: Evidence, description: string): ProposedAction[] {
  return evidence.pathsRead.length > 0 ? [{ kind: 'read', description, paths: evidence.pathsRead }] : [];
}
