/**
 * govern-ai `compliance` (its domain's default action): the workspace judged against the SOC2, HIPAA
 * and PCI-DSS control checklists, read-only and deterministic (no model, no network). Secrets are
 * found with security-ai's scanner and its one rule table, so the control and the scanner agree.
 *
 * Missing controls are findings of the project, never a failed gate of the step. Audit-evidenced
 * controls use `input.audit` when it is given (the engine's facts, or the request's own) and are
 * `not_assessable` without it.
 */
import { existsSync } from 'node:fs';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { RepoIndex } from '../evolve/repo-index';
import { WorkspaceFiles } from '../workspace/files';
import { coverageOf, listFiles, scanTree } from '../security/scanner';
import { assessCompliance, renderCompliance, type ComplianceReport } from './compliance';
import { complianceDataSchema, complianceInputSchema } from './compliance-schemas';
import { FRAMEWORKS, frameworkOf, type Framework } from './controls/frameworks';
import type { AuditFacts, ProbeFacts } from './controls/probes';

interface Prepared {
  frameworks: Framework[];
  scope: string[];
  idx?: RepoIndex;
  facts?: ProbeFacts;
  coverage?: number;
  problem?: { field: string; message: string };
}

/** `input.framework` as framework ids, or the message naming the unknown one. */
export function parseFrameworks(raw: unknown): Framework[] | { error: string } {
  if (raw === undefined || raw === null || raw === '') return [...FRAMEWORKS];
  const list = (Array.isArray(raw) ? raw : String(raw).split(',')).map((x) => String(x)).filter((x) => x.trim());
  const out: Framework[] = [];
  for (const x of list) {
    const f = frameworkOf(x);
    if (!f) return { error: `input.framework: unknown framework "${x.trim()}" (soc2, hipaa, pci-dss)` };
    if (!out.includes(f)) out.push(f);
  }
  return out.length ? out : [...FRAMEWORKS];
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : undefined);

/** `input.audit` normalised (numbers and booleans may come as text from a query string). */
export function parseAuditFacts(raw: unknown): AuditFacts | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const out: AuditFacts = {};
  const records = num(o['records']);
  if (records !== undefined) out.records = records;
  const cv = o['chainVerified'];
  if (cv === true || cv === 'true') out.chainVerified = true; else if (cv === false || cv === 'false') out.chainVerified = false;
  if (typeof o['tampered'] === 'string') out.tampered = o['tampered'];
  const ap = o['approvals'];
  if (ap && typeof ap === 'object' && !Array.isArray(ap)) {
    const a = ap as Record<string, unknown>;
    const decided = num(a['decided']);
    const byPerson = num(a['byPerson']);
    out.approvals = { ...(decided !== undefined ? { decided } : {}), ...(byPerson !== undefined ? { byPerson } : {}) };
  }
  return out;
}

function prepare(ctx: SkillContext): Prepared {
  const fws = parseFrameworks(ctx.request.input['framework']);
  if ('error' in fws) return { frameworks: [], scope: [], problem: { field: 'framework', message: fws.error } };
  const raw = ctx.request.input['paths'];
  const given = raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String);
  const ws = new WorkspaceFiles(ctx.request.workspace!);
  const scope: string[] = [];
  for (const g of given) {
    const r = ws.resolve(g);
    if (!r.ok) return { frameworks: fws, scope, problem: { field: 'paths', message: `input.paths: ${g} ${r.reason === 'not found' ? 'does not exist in the workspace' : `is ${r.reason}; not read`}` } };
    scope.push(r.rel);
  }
  return { frameworks: fws, scope };
}

function confidenceOf(r: ComplianceReport, coverage: number): number {
  const total = r.frameworks.reduce((n, f) => n + f.controls.length, 0);
  const assessable = r.frameworks.reduce((n, f) => n + f.assessable, 0);
  // More controls judged on real evidence, and a fuller secret scan, make the result surer.
  const share = total ? assessable / total : 0;
  return Math.round(0.9 * (0.4 + 0.6 * share) * (0.5 + 0.5 * coverage) * 100) / 100;
}

export const complianceSkill: Skill = (() => {
  const prepared = new WeakMap<Evidence, Prepared>();
  const kind = 'govern-compliance';
  return {
    agentId: 'govern-ai',
    action: 'compliance',
    inputSchema: complianceInputSchema,
    outputSchema: complianceDataSchema,
    needs: ['workspace'],
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to judge'); return evidence; }
      const p = prepare(ctx);
      prepared.set(evidence, p);
      if (p.problem) { evidence.constraints.push(p.problem.message); return evidence; }
      const idx = new RepoIndex(ws, p.scope);
      // What git ignores (a local .env) is not in the repository: the scanner's own listing honours .gitignore.
      const tracked = new Set(listFiles(idx.root));
      const scan = await scanTree(idx.root, { files: idx.files.filter((f) => tracked.has(f)), workers: 0, signal: ctx.signal });
      const audit = parseAuditFacts(ctx.request.input['audit']);
      p.idx = idx;
      p.coverage = idx.files.length ? coverageOf(scan) : 0;
      p.facts = {
        secrets: { findings: scan.findings.map((f) => ({ file: f.file, line: f.range.startLine, ruleId: f.ruleId, ...(f.snippet ? { snippet: f.snippet } : {}) })), filesScanned: scan.filesScanned },
        ...(audit ? { audit } : {}),
      };
      evidence.items.push({ source: ws, detail: `${idx.files.length} file(s) listed, ${scan.filesScanned} scanned for secrets`, weight: 0.6 });
      if (!audit) evidence.constraints.push('no audit facts (input.audit): audit-evidenced controls are not assessable');
      ctx.progress(40, 0.5);
      return evidence;
    },
    propose(_ctx, evidence) {
      const p = prepared.get(evidence);
      if (!p?.idx) return [];
      const out: ProposedAction[] = [{ kind: 'read', description: `read ${p.idx.files.length} workspace file(s) for control evidence and secrets (read-only)`, paths: p.scope.length ? p.scope : ['.'] }];
      return out;
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) {
        const why = 'no workspace was given to judge';
        return { kind, summary: `govern-ai compliance: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, needsInput: { field: 'source' }, tokens: 0 };
      }
      const p = prepared.get(evidence) ?? prepare(ctx);
      if (p.problem) return { kind, summary: `govern-ai compliance: unable: ${p.problem.message}`, goalRef, confidence: 0, data: null, unable: p.problem.message, needsInput: { field: p.problem.field }, tokens: 0 };
      const idx = p.idx;
      if (!idx || !p.facts) return { kind, summary: 'govern-ai compliance: unable: the workspace was not read (Research did not run)', goalRef, confidence: 0, data: null, unable: 'the workspace was not read (Research did not run)', tokens: 0 };
      if (!idx.files.length) {
        const why = `no file to judge in ${p.scope.length ? p.scope.join(', ') : 'the workspace'}`;
        return { kind, summary: `govern-ai compliance: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const report = assessCompliance(idx, p.frameworks, p.facts, p.scope);
      evidence.pathsRead.push(...idx.pathsRead());
      const confidence = confidenceOf(report, p.coverage ?? 0);
      ctx.progress(100, confidence);
      const gaps = report.frameworks.flatMap((f) => f.controls.filter((c) => c.status === 'missing' || c.status === 'partial'));
      const secrets = p.facts.secrets.findings.length;
      const summary = report.frameworks.map((f) => `${f.framework} ${f.score === null ? 'n/a' : `${Math.round(f.score * 100)}%`} (${f.met}/${f.assessable} met, ${f.partial} partial, ${f.missing} missing, ${f.notAssessable} not assessable)`).join('; ')
        + (gaps.length ? `; gaps: ${[...new Set(gaps.map((c) => c.id))].slice(0, 6).join(', ')}${gaps.length > 6 ? ' ...' : ''}` : '')
        + (secrets ? `; ${secrets} secret(s) committed` : '');
      return {
        kind, summary, goalRef, confidence, tokens: 0, data: report, text: renderCompliance(report),
        findingsAfter: { count: gaps.length, maxSeverity: secrets ? 3 : gaps.some((c) => c.status === 'missing') ? 2 : gaps.length ? 1 : 0 },
      };
    },
  };
})();

export const governComplianceSkills: Skill[] = [complianceSkill];
