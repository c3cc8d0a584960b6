/**
 * govern-ai compliance: each control of the chosen frameworks (controls/frameworks.ts) judged on the
 * repository (controls/probes.ts), with the evidence found (file and line, config value, audit fact)
 * or the evidence missing (what was looked for, where). A control checked by several probes is met
 * when every assessable probe is met, missing when none found anything, partial otherwise; a probe
 * that cannot be assessed (no audit facts, no infrastructure definition) is named with its reason and
 * does not count for or against the control unless it is the only one.
 *
 * A framework's score is met / assessable (controls that are not `not_assessable`), as the brief of
 * the action says: a partial control is not met.
 */
import type { Located, RepoIndex } from '../evolve/repo-index';
import { CONTROLS, FRAMEWORK_NAMES, type ControlDef, type Framework } from './controls/frameworks';
import { PROBES, runProbe, type ControlStatus, type Looked, type ProbeFacts, type ProbeResult } from './controls/probes';

export interface ControlResult {
  id: string;
  title: string;
  /** What evidence counts. */
  evidence: string;
  /** How it is checked (the probes' sentences), or why it is not. */
  how: string;
  status: ControlStatus;
  why?: string;
  found: Located[];
  missing: Looked[];
  contrary: Located[];
  checks: Array<{ probe: string; status: ControlStatus; why?: string }>;
}

export interface FrameworkResult {
  framework: Framework;
  name: string;
  /** met / assessable, 0..1; null when no control could be assessed. */
  score: number | null;
  met: number;
  partial: number;
  missing: number;
  notAssessable: number;
  assessable: number;
  controls: ControlResult[];
}

export interface ComplianceReport {
  frameworks: FrameworkResult[];
  examined: { files: number; scope: string[]; secretsScanned: number; audit: boolean };
}

function judgeControl(c: ControlDef, results: Map<string, ProbeResult>): ControlResult {
  const base = { id: c.id, title: c.title, evidence: c.evidence };
  if (c.organisational) return { ...base, how: 'not checked automatically', status: 'not_assessable', why: c.organisational, found: [], missing: [], contrary: [], checks: [] };
  const rs = c.probes.map((p) => ({ probe: p, r: results.get(p)! }));
  const assessed = rs.filter((x) => x.r.status !== 'not_assessable');
  let status: ControlStatus;
  if (!assessed.length) status = 'not_assessable';
  else if (assessed.every((x) => x.r.status === 'met')) status = 'met';
  else if (assessed.every((x) => x.r.status === 'missing')) status = 'missing';
  else status = 'partial';
  const whys = rs.filter((x) => x.r.why).map((x) => `${x.probe}: ${x.r.why}`);
  return {
    ...base,
    how: c.probes.map((p) => PROBES[p]!.how).join('; '),
    status,
    ...(whys.length ? { why: whys.join('; ') } : {}),
    found: rs.flatMap((x) => x.r.found),
    // A probe that could not be assessed says why in `checks`; its missing evidence is listed only when nothing else was assessed.
    missing: (assessed.length ? assessed : rs).flatMap((x) => x.r.missing),
    contrary: rs.flatMap((x) => x.r.contrary),
    checks: rs.map((x) => ({ probe: x.probe, status: x.r.status, ...(x.r.why ? { why: x.r.why } : {}) })),
  };
}

/** Judges the frameworks' controls; each probe runs once however many controls use it. */
export function assessCompliance(idx: RepoIndex, frameworks: readonly Framework[], facts: ProbeFacts, scope: string[] = []): ComplianceReport {
  const results = new Map<string, ProbeResult>();
  for (const fw of frameworks) {
    for (const c of CONTROLS[fw]) for (const p of c.probes) if (!results.has(p)) results.set(p, runProbe(PROBES[p]!, idx, facts));
  }
  const out: FrameworkResult[] = frameworks.map((fw) => {
    const controls = CONTROLS[fw].map((c) => judgeControl(c, results));
    const count = (s: ControlStatus) => controls.filter((c) => c.status === s).length;
    const assessable = controls.length - count('not_assessable');
    return {
      framework: fw, name: FRAMEWORK_NAMES[fw],
      score: assessable ? Math.round((count('met') / assessable) * 1000) / 1000 : null,
      met: count('met'), partial: count('partial'), missing: count('missing'), notAssessable: count('not_assessable'), assessable, controls,
    };
  });
  return { frameworks: out, examined: { files: idx.files.length, scope, secretsScanned: facts.secrets.filesScanned, audit: !!facts.audit } };
}

/** Markdown for `text`: one table per framework, the gaps with what was looked for. */
export function renderCompliance(r: ComplianceReport): string {
  const lines: string[] = ['# govern-ai compliance', ''];
  for (const f of r.frameworks) {
    lines.push(`## ${f.name}: ${f.score === null ? 'nothing assessable' : `${Math.round(f.score * 100)}% (${f.met} met of ${f.assessable} assessable)`}`, '');
    lines.push(`${f.partial} partial, ${f.missing} missing, ${f.notAssessable} not assessable.`, '', '| control | status | evidence |', '|---|---|---|');
    for (const c of f.controls) {
      const ev = c.status === 'not_assessable' ? (c.why ?? '')
        : [...c.found.map((e) => `${e.file}${e.line ? `:${e.line}` : ''} ${e.detail}`), ...c.contrary.map((e) => `against: ${e.file}${e.line ? `:${e.line}` : ''} ${e.detail}`),
          ...c.missing.map((m) => `missing: ${m.what} (looked in ${m.where})`)].join('<br>');
      lines.push(`| ${c.id} ${c.title} | ${c.status} | ${ev.replace(/\|/g, '\\|')} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
