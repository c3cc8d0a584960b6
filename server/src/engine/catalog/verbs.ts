/**
 * Task verbs (contract: "Clients": code, review, test, deploy, monitor, debug, incident, maintain,
 * capacity, backup, security) as data: which capability each belongs to and which agents and actions
 * it runs, in which pattern. A verb runs the agents it names and nothing else; `code` is the one verb
 * that runs a whole domain workflow (BUILD). A task submitted with capabilities only (no verb) runs
 * its capabilities' domain workflows (plan.ts `planTask`).
 *
 * `optional` steps run only when the request gives them something to work on; when it does not,
 * the step ends `not_applicable` with its reason (threathunter-ai with no logs to hunt in) and the
 * execution goes on. `minIntelligence` steps join only at that intelligence tier or above (review's
 * security-ai code checks are a feature of ULTRA, contract "Products and intelligence tiers").
 *
 * The table is documented in docs/decisions.md ("Verbs and plans") and checked by
 * test/unit/catalog/verbs.test.ts against the contract's verb list and the agent catalog.
 */
import type { Capability, IntelligenceTier } from './enums';

export const TASK_VERBS = ['code', 'review', 'test', 'debug', 'security', 'deploy', 'monitor', 'incident', 'maintain', 'capacity', 'backup'] as const;
export type TaskVerb = (typeof TASK_VERBS)[number];

export interface VerbStep {
  agent: string;
  action: string;
  /** Joins only at this intelligence tier or above. */
  minIntelligence?: IntelligenceTier;
}

export interface VerbDef {
  verb: TaskVerb;
  capability: Capability;
  description: string;
  /** A domain workflow id (the verb runs that workflow), or null: the verb runs `steps`. */
  workflow: string | null;
  steps: readonly VerbStep[];
  pattern: 'sequential' | 'parallel';
}

export const VERBS: readonly VerbDef[] = Object.freeze([
  { verb: 'code', capability: 'BUILD', workflow: 'build', pattern: 'sequential', steps: [],
    description: 'The BUILD workflow: requirements, plan, design, code on a branch, review of that branch, its tests (debug-ai as needed).' },
  { verb: 'review', capability: 'BUILD', workflow: null, pattern: 'parallel',
    steps: [{ agent: 'review-ai', action: 'review' }, { agent: 'security-ai', action: 'scan', minIntelligence: 'ultra' }],
    description: "review-ai reviews the given files or the diff; at ULTRA security-ai's scan (with its static code analysis and custom rules) runs beside it." },
  { verb: 'test', capability: 'BUILD', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'tester-ai', action: 'test' }],
    description: "tester-ai runs the project's own test command and reports the parsed results." },
  { verb: 'debug', capability: 'BUILD', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'debug-ai', action: 'explain' }],
    description: 'debug-ai parses the given error or stack trace, maps it to the workspace and proposes a fix.' },
  { verb: 'security', capability: 'SECURE', workflow: null, pattern: 'parallel',
    steps: [{ agent: 'security-ai', action: 'scan' }, { agent: 'threathunter-ai', action: 'hunt' }],
    description: 'security-ai scans the workspace; threathunter-ai hunts in the logs when there are any (else it is not applicable).' },
  { verb: 'deploy', capability: 'OPERATE', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'deploy-ai', action: 'readiness' }, { agent: 'deploy-ai', action: 'plan' }],
    description: 'deploy-ai checks readiness, then writes the deployment plan.' },
  { verb: 'monitor', capability: 'OPERATE', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'observe-ai', action: 'analyze' }],
    description: 'observe-ai ingests the metrics and logs and detects anomalies.' },
  { verb: 'incident', capability: 'OPERATE', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'incident-ai', action: 'triage' }],
    description: 'incident-ai classifies the severity and sets the escalation path and timeline.' },
  { verb: 'maintain', capability: 'OPERATE', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'maintain-ai', action: 'health' }],
    description: 'maintain-ai runs the routine maintenance checks.' },
  { verb: 'capacity', capability: 'OPERATE', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'capacity-ai', action: 'forecast' }],
    description: 'capacity-ai forecasts the given metric series and the time to saturation.' },
  { verb: 'backup', capability: 'OPERATE', workflow: null, pattern: 'sequential',
    steps: [{ agent: 'backup-ai', action: 'snapshot' }],
    description: 'backup-ai snapshots the workspace to an archive with a manifest of hashes.' },
] satisfies VerbDef[]);

export function findVerb(verb: string): VerbDef | undefined {
  return VERBS.find((v) => v.verb === verb);
}

export function isTaskVerb(v: unknown): v is TaskVerb {
  return typeof v === 'string' && (TASK_VERBS as readonly string[]).includes(v);
}

/**
 * The verb a task text starts with, in the `verb: instruction` form the CLI and the editor send
 * (`review: src/index.ts for bugs`); undefined when it does not start with one.
 */
export function verbPrefix(task: string): { verb: TaskVerb; rest: string } | undefined {
  const m = /^\s*([a-z]+)\s*:\s*([\s\S]*)$/.exec(task);
  return m && isTaskVerb(m[1]) ? { verb: m[1], rest: m[2]!.trim() } : undefined;
}

/**
 * Workspace-relative file paths named in an instruction ("review src/index.ts for bugs"): words
 * with a file extension or a slash, no scheme, no absolute path, no `..`. They become the step's
 * `input.files`, which review-ai, tester-ai and coder-ai read as the files to work on.
 */
export function filesNamedIn(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\s+/)) {
    const w = raw.replace(/^[`'"(<[]+|[`'")>\],;:!?]+$/g, '').replace(/\.$/, '').replace(/:\d+(:\d+)?$/, '');
    if (!w || w.length > 300 || /^[a-z][a-z0-9+.-]*:/i.test(w) || w.startsWith('/') || w.startsWith('~') || w.split(/[\\/]/).includes('..')) continue;
    const base = w.split('/').pop() ?? '';
    const hasExt = /^[^.].*\.[A-Za-z0-9]{1,8}$/.test(base) && !/^\d+(\.\d+)+$/.test(base);
    if (!hasExt) continue;
    const clean = w.replace(/^\.\//, '');
    if (!out.includes(clean)) out.push(clean);
  }
  return out;
}
