/**
 * security-ai `secrets` and `scan` skills. `scan` is limited to secrets for now (dangerous code
 * patterns, dependency advisories and IaC checks are not implemented yet); the artifact says so.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { filterNew, readBaseline } from '../findings/baseline';
import { countBySeverity, maxSeverity, type Finding } from '../findings/finding';
import { toSarif } from '../findings/sarif';
import { SECRET_RULE_DEFS } from './rules';
import { coverageOf, listFiles, scanTree, type TreeScanResult } from './scanner';

export const SCAN_LIMITATION = 'scan covers secrets only for now; dangerous code patterns, dependency advisories and infrastructure-as-code checks are not implemented yet';

export interface SecurityReportData {
  scope: 'secrets';
  limitations: string[];
  findings: Finding[];
  summary: {
    total: number;
    bySeverity: Record<string, number>;
    byRule: Record<string, number>;
    filesConsidered: number;
    filesScanned: number;
    coverage: number;
    skipped: Record<string, number>;
    suppressed: number;
    /** Findings already in the baseline (not reported), when a baseline was given. */
    baselined: number;
  };
  suppressed: Array<{ ruleId: string; file: string; line: number; reason: string }>;
  sarif: Record<string, unknown>;
}

function renderText(action: string, data: SecurityReportData): string {
  const s = data.summary;
  const lines = [
    `# security-ai ${action}`,
    '',
    `${s.total} finding(s) in ${s.filesScanned} of ${s.filesConsidered} file(s) (coverage ${(s.coverage * 100).toFixed(1)}%).`,
    `By severity: ${Object.entries(s.bySeverity).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}.`,
  ];
  if (s.suppressed) lines.push(`${s.suppressed} finding(s) suppressed inline with a reason.`);
  if (s.baselined) lines.push(`${s.baselined} finding(s) already in the baseline are not reported.`);
  for (const l of data.limitations) lines.push(`Note: ${l}.`);
  if (data.findings.length) lines.push('', '| severity | rule | location | snippet (redacted) |', '|---|---|---|---|');
  for (const f of data.findings.slice(0, 200)) {
    // Snippets are redacted by the scanner; backticks and pipes are neutralised for the table.
    const snip = (f.snippet ?? '').replace(/[|`]/g, ' ').slice(0, 120);
    lines.push(`| ${f.severity} | ${f.ruleId} | ${f.file}:${f.range.startLine}:${f.range.startColumn} | ${snip} |`);
  }
  if (data.findings.length > 200) lines.push(`... and ${data.findings.length - 200} more (see data.findings / SARIF).`);
  return `${lines.join('\n')}\n`;
}

function baselineOf(ctx: SkillContext, workspace: string): string[] | undefined {
  const b = ctx.request.input['baseline'];
  if (Array.isArray(b) && b.every((x) => typeof x === 'string')) return b as string[];
  const file = typeof b === 'string' ? b : '.cadre/secrets-baseline.json';
  const abs = path.resolve(workspace, file);
  if (!existsSync(abs)) return undefined;
  return readBaseline(abs).fingerprints;
}

/** Builds the report from a tree scan (exported for tests and other callers). */
export function buildSecurityReport(result: TreeScanResult, baseline: readonly string[] | undefined, workspaceUri?: string, limitations: string[] = []): SecurityReportData {
  const findings = baseline ? filterNew(result.findings, baseline) : result.findings;
  const byRule: Record<string, number> = {};
  for (const f of findings) byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  const skipped: Record<string, number> = {};
  for (const s of result.skipped) skipped[s.reason] = (skipped[s.reason] ?? 0) + 1;
  return {
    scope: 'secrets',
    limitations,
    findings,
    summary: {
      total: findings.length,
      bySeverity: countBySeverity(findings),
      byRule,
      filesConsidered: result.filesConsidered,
      filesScanned: result.filesScanned,
      coverage: coverageOf(result),
      skipped,
      suppressed: result.suppressed.length,
      baselined: result.findings.length - findings.length,
    },
    suppressed: result.suppressed.map((s) => ({ ruleId: s.finding.ruleId, file: s.finding.file, line: s.finding.range.startLine, reason: s.reason })),
    sarif: toSarif(findings, SECRET_RULE_DEFS, { toolName: 'cadre-security-ai', ...(workspaceUri ? { workspaceUri } : {}) }),
  };
}

function makeSecuritySkill(action: 'secrets' | 'scan'): Skill {
  const limitations = action === 'scan' ? [SCAN_LIMITATION] : [];
  return {
    agentId: 'security-ai',
    action,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) {
        evidence.constraints.push('no workspace to scan');
        return evidence;
      }
      const files = listFiles(ws);
      evidence.pathsRead.push(...files);
      evidence.items.push({ source: 'workspace listing', detail: `${files.length} file(s) to scan (skip dirs and .gitignore applied)`, weight: files.length ? 1 : 0 });
      if (action === 'scan') evidence.constraints.push(SCAN_LIMITATION);
      ctx.progress(20, 0);
      return evidence;
    },
    propose(_ctx, evidence) {
      return evidence.pathsRead.length ? [{ kind: 'read', description: `read ${evidence.pathsRead.length} workspace file(s) to scan for secrets`, paths: evidence.pathsRead }] : [];
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string): Artifact => ({ kind: 'security-findings', summary: `security-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace to scan');
      if (evidence.pathsRead.length === 0) return unable('the workspace has no files to scan');
      const result = await scanTree(ws, { files: evidence.pathsRead, signal: ctx.signal });
      const coverage = coverageOf(result);
      if (result.filesScanned === 0) return unable('no text file of the workspace could be scanned');
      ctx.progress(80, coverage);
      const data = buildSecurityReport(result, baselineOf(ctx, ws), `file://${ws}`, limitations);
      const s = data.summary;
      const sev = Object.entries(s.bySeverity).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ');
      return {
        kind: 'security-findings',
        summary: `security-ai ${action}: ${s.total} secret finding(s)${sev ? ` (${sev})` : ''} in ${s.filesScanned}/${s.filesConsidered} files${action === 'scan' ? '; secrets only for now' : ''}`,
        goalRef,
        confidence: coverage,
        data,
        text: renderText(action, data),
        findingsAfter: { count: s.total, maxSeverity: Math.max(0, maxSeverity(data.findings)) },
        tokens: 0,
      };
    },
    async optimize(_ctx, artifact) {
      const data = artifact.data as SecurityReportData | null;
      if (!data) return { artifact, patterns: [] };
      // Highest severity first; one finding per fingerprint and location.
      const seen = new Set<string>();
      const rank = (f: Finding) => ['critical', 'high', 'medium', 'low', 'info'].indexOf(f.severity);
      const findings = [...data.findings].sort((a, b) => rank(a) - rank(b) || a.file.localeCompare(b.file) || a.range.startLine - b.range.startLine)
        .filter((f) => {
          const k = `${f.fingerprint}@${f.file}:${f.range.startLine}:${f.range.startColumn}`;
          return seen.has(k) ? false : (seen.add(k), true);
        });
      return { artifact: { ...artifact, data: { ...data, findings } }, patterns: [] };
    },
  };
}

export const secretsSkill: Skill = makeSecuritySkill('secrets');
export const scanSkill: Skill = makeSecuritySkill('scan');
export const securitySkills: Skill[] = [secretsSkill, scanSkill];
