/**
 * ACMF: per-agent autonomy (OBSERVE, LEARNING, ASSISTED, AUTONOMOUS), risk of proposed actions,
 * the mode x risk decision table, human approvals and progression/regression.
 *
 * @example
 * const acmf = new AcmfService({ agents, approvals, audit, bus, clock, settings, newId });
 * const [ev] = await acmf.evaluate('coder-ai', [{ kind: 'write_file', description: 'fix', paths: ['src/a.ts'] }], 'mvp');
 * if (ev.decision === 'approval_required') {
 *   const req = await acmf.requestApproval({ executionId, agentId: 'coder-ai', action: ev.action, risk: ev.risk, reasons: ev.reasons });
 *   const decided = await acmf.waitForDecision(req.id, signal);
 *   if (!isApproved(decided)) throw new EngineError('ERR_ACMF_DENIED', denialReason(decided)!);
 * }
 */
export * from './records';
export * from './risk';
export * from './policy';
export * from './acmf-service';
export * from './separation-of-duties';
