/** The pull request's title, body and labels: the RIGOR evidence and the ACMF level, for the people who review it. */
import type { PrRecord } from './ports';

export const ACMF_LABEL_PREFIX = 'cadre:acmf-';

export function prTitle(rec: Pick<PrRecord, 'agentId' | 'incident' | 'evidence' | 'executionId'>): string {
  const what = rec.evidence.summary?.split('\n')[0]?.slice(0, 120) || `changes from ${rec.executionId}`;
  return `${rec.incident ? `[incident ${rec.incident}] ` : ''}${rec.agentId}: ${what}`;
}

export function prLabels(rec: Pick<PrRecord, 'mode' | 'incident'>): string[] {
  return ['cadre', `${ACMF_LABEL_PREFIX}${rec.mode.toLowerCase()}`, ...(rec.incident ? ['cadre:incident-fix'] : [])];
}

const cell = (v: unknown) => String(v ?? '—').replace(/\|/g, '\\|').replace(/\n/g, ' ').slice(0, 80);

export function prBody(rec: PrRecord, mergeRules: string[]): string {
  const e = rec.evidence;
  const lines = [
    `Opened by Cadre for **${rec.agentId}** (execution \`${rec.executionId}\`, step ${rec.step}).`,
    '',
    `**ACMF level:** \`${rec.mode}\`${rec.approvalId ? ` — created after approval \`${rec.approvalId}\`` : ''}`,
    `**Confidence:** ${e.confidence === null ? 'not measured' : `${Math.round(e.confidence * 100)}%`}`,
    ...(rec.incident ? [`**Incident:** ${rec.incident}`] : []),
    ...(rec.significant.significant ? [`**Significant change:** ${rec.significant.reasons.join('; ')}`] : []),
    '',
    '### RIGOR Review',
    '',
    '| # | gate | result | value | threshold |',
    '|---|---|---|---|---|',
    ...e.gates.map((g) => `| ${g.number} | ${cell(g.gate)} | ${g.status === 'pass' ? 'pass' : g.status === 'fail' ? '**fail**' : 'n/a'} | ${cell(g.value)} | ${cell(g.threshold)} |`),
    ...(e.gates.length === 0 ? ['| — | no gate results recorded | | | |'] : []),
    '',
    '### Findings fixed',
    '',
    ...(e.findingsFixed.length ? e.findingsFixed.map((f) => `- ${f}`) : ['- none reported']),
    '',
    '### Files',
    '',
    ...rec.files.map((f) => `- \`${f.path}\` (+${f.additions} −${f.deletions})`),
    '',
    '### Before merge',
    '',
    ...mergeRules.map((r) => `- [ ] ${r}`),
    '',
    `<!-- cadre: execution=${rec.executionId} step=${rec.step} agent=${rec.agentId} acmf=${rec.mode} -->`,
  ];
  return lines.join('\n');
}
