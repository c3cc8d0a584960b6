/**
 * The natural-language router of `cadre "<instruction>"` as data: which words and phrases point to
 * which task verb or workflow, and how strongly. Deterministic, no model: the instruction is split
 * into lower-case words; every phrase found adds its weight to its target; the instruction's first
 * word, when it is a phrase, adds one more (an imperative names the job: "review ...", "deploy ...");
 * the highest total wins, a tie goes to the target listed first below. The reason printed names the
 * phrases that decided. Documented in docs/cli.md ("Natural language") and checked on a table of
 * instructions in test/unit/cli/intents.test.ts.
 *
 * Phrase syntax: words separated by spaces, matched as consecutive words; a word ending in `*`
 * matches any word it begins (`vulnerab*` matches "vulnerable", "vulnerabilities").
 */
import { type TaskVerb, VERBS } from './verbs';
import { findWorkflow, pipelineAgents } from './workflows';

export type IntentTarget = { kind: 'verb'; verb: TaskVerb } | { kind: 'workflow'; workflow: string };

export interface IntentRule {
  target: IntentTarget;
  /** 3: names the job outright; 2: a strong sign of it; 1: a hint. */
  weight: 1 | 2 | 3;
  phrases: readonly string[];
}

const verb = (v: TaskVerb): IntentTarget => ({ kind: 'verb', verb: v });
const workflow = (w: string): IntentTarget => ({ kind: 'workflow', workflow: w });

/** Workflows first: their phrases are longer and more specific than any verb's single word. */
export const INTENT_RULES: readonly IntentRule[] = Object.freeze([
  { target: workflow('full-sdlc'), weight: 3, phrases: ['full sdlc', 'end to end', 'from requirements to production', 'requirements to deployment', 'idea to production'] },
  { target: workflow('incident-response'), weight: 3, phrases: ['incident response', 'respond to the incident', 'run the incident playbook'] },
  { target: workflow('security-driven-refactoring'), weight: 3, phrases: ['security driven refactoring', 'refactor for security', 'refactor the vulnerable'] },
  { target: workflow('dependency-update-cascade'), weight: 3, phrases: ['dependency update cascade', 'update the dependencies', 'update dependencies', 'upgrade dependencies', 'upgrade the dependencies', 'bump dependencies'] },
  { target: workflow('compliance-audit-automation'), weight: 3, phrases: ['compliance audit', 'soc 2', 'soc2', 'gdpr', 'hipaa', 'pci dss'] },
  { target: workflow('cost-anomaly-remediation'), weight: 3, phrases: ['cost anomaly', 'cloud cost', 'cloud bill', 'cost spike'] },
  { target: workflow('performance-regression-fix'), weight: 3, phrases: ['performance regression', 'got slower', 'slower since'] },
  { target: workflow('technical-debt-prioritization'), weight: 3, phrases: ['technical debt', 'tech debt'] },
  { target: workflow('threat-to-incident-correlation'), weight: 3, phrases: ['correlate threats', 'threat correlation', 'correlate the threat'] },

  { target: verb('review'), weight: 3, phrases: ['review', 'reviews', 'code review', 'look over', 'proofread'] },
  { target: verb('review'), weight: 1, phrases: ['bugs', 'bug', 'pull request', 'diff', 'smell*', 'readab*', 'quality'] },
  { target: verb('security'), weight: 3, phrases: ['security', 'secure', 'vulnerab*', 'pentest', 'threat hunt', 'hunt for threats'] },
  { target: verb('security'), weight: 2, phrases: ['injection', 'sqli', 'xss', 'csrf', 'secret', 'secrets', 'leaked', 'credential*', 'cve', 'cves', 'owasp', 'malware', 'exploit*'] },
  { target: verb('security'), weight: 1, phrases: ['scan', 'audit', 'password*', 'token*'] },
  { target: verb('test'), weight: 3, phrases: ['test', 'tests', 'unit tests', 'run the tests', 'test suite'] },
  { target: verb('test'), weight: 2, phrases: ['coverage', 'failing tests', 'flaky'] },
  { target: verb('debug'), weight: 3, phrases: ['debug', 'stack trace', 'stacktrace', 'traceback', 'diagnose'] },
  { target: verb('debug'), weight: 2, phrases: ['exception', 'crash*', 'error', 'errors', 'typeerror', 'null pointer', 'segfault', 'why does', 'throws'] },
  { target: verb('code'), weight: 3, phrases: ['implement', 'code', 'write code', 'build a', 'build the'] },
  { target: verb('code'), weight: 2, phrases: ['add', 'create', 'refactor', 'feature', 'endpoint', 'rewrite', 'generate'] },
  { target: verb('deploy'), weight: 3, phrases: ['deploy', 'deployment', 'release', 'roll out', 'rollout', 'go live', 'ship'] },
  { target: verb('deploy'), weight: 2, phrases: ['readiness', 'ready to deploy', 'ready for production'] },
  { target: verb('incident'), weight: 3, phrases: ['incident', 'outage', 'sev1', 'sev2', 'postmortem', 'post mortem'] },
  { target: verb('incident'), weight: 2, phrases: ['is down', 'went down', 'on call', 'paged', 'pager'] },
  { target: verb('monitor'), weight: 3, phrases: ['monitor', 'monitoring', 'observe', 'anomal*'] },
  { target: verb('monitor'), weight: 2, phrases: ['metrics', 'latency', 'p95', 'p99', 'error rate', 'dashboard', 'alerts'] },
  { target: verb('capacity'), weight: 3, phrases: ['capacity', 'forecast', 'saturation', 'headroom'] },
  { target: verb('capacity'), weight: 2, phrases: ['disk full', 'run out of', 'scale up', 'scaling', 'growth'] },
  { target: verb('backup'), weight: 3, phrases: ['backup', 'back up', 'snapshot', 'backups'] },
  { target: verb('backup'), weight: 2, phrases: ['restore', 'archive', 'disaster recovery'] },
  { target: verb('maintain'), weight: 3, phrases: ['maintain', 'maintenance', 'housekeeping', 'health check'] },
  { target: verb('maintain'), weight: 2, phrases: ['cleanup', 'clean up', 'outdated', 'stale', 'tidy'] },
] satisfies IntentRule[]);

export interface IntentMatch {
  phrase: string;
  target: IntentTarget;
  weight: number;
}

export interface IntentAgent {
  agent: string;
  /** Set when the agent joins only at that intelligence tier or above. */
  minIntelligence?: string;
}

export interface Intent {
  target: IntentTarget;
  /** The agents the target runs, in order. */
  agents: IntentAgent[];
  score: number;
  /** In words: which phrases chose the target. */
  reason: string;
  matches: IntentMatch[];
  /** Other targets that scored, best first, with their score. */
  alternatives: Array<{ target: IntentTarget; score: number }>;
}

export function targetName(t: IntentTarget): string {
  return t.kind === 'verb' ? t.verb : t.workflow;
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

/** Start indexes in `ws` where `phrase` matches (consecutive words; `*` = prefix). */
function matchesAt(ws: string[], phrase: string): number[] {
  const ps = phrase.split(' ');
  const hits: number[] = [];
  for (let i = 0; i + ps.length <= ws.length; i++) {
    if (ps.every((p, j) => (p.endsWith('*') ? ws[i + j]!.startsWith(p.slice(0, -1)) : ws[i + j] === p))) hits.push(i);
  }
  return hits;
}

export function agentsOf(t: IntentTarget): IntentAgent[] {
  if (t.kind === 'workflow') return pipelineAgents(findWorkflow(t.workflow)!).map((agent) => ({ agent }));
  const def = VERBS.find((v) => v.verb === t.verb)!;
  if (def.workflow) return pipelineAgents(findWorkflow(def.workflow)!).map((agent) => ({ agent }));
  const seen = new Set<string>();
  return def.steps.filter((s) => !seen.has(s.agent) && seen.add(s.agent)).map((s) => ({ agent: s.agent, ...(s.minIntelligence ? { minIntelligence: s.minIntelligence } : {}) }));
}

/** The verb or workflow an instruction asks for, or null when no phrase of the table occurs in it. */
export function classifyIntent(instruction: string): Intent | null {
  const ws = words(instruction);
  const scores = new Map<string, { target: IntentTarget; score: number; order: number; matches: IntentMatch[] }>();
  INTENT_RULES.forEach((rule, order) => {
    for (const phrase of rule.phrases) {
      const at = matchesAt(ws, phrase);
      if (at.length === 0) continue;
      const key = `${rule.target.kind}:${targetName(rule.target)}`;
      const entry = scores.get(key) ?? { target: rule.target, score: 0, order, matches: [] };
      // A phrase counts once however often it occurs; the imperative first word counts one more.
      const weight = rule.weight + (at[0] === 0 ? 1 : 0);
      entry.score += weight;
      entry.matches.push({ phrase, target: rule.target, weight });
      scores.set(key, entry);
    }
  });
  const ranked = [...scores.values()].sort((a, b) => b.score - a.score || a.order - b.order);
  const best = ranked[0];
  if (!best) return null;
  const what = best.target.kind === 'verb' ? `the ${best.target.verb} verb` : `the ${best.target.workflow} workflow`;
  const reason = `${best.matches.map((m) => `"${m.phrase}"`).join(', ')} ${best.matches.length === 1 ? 'points' : 'point'} to ${what} (score ${best.score})`;
  return {
    target: best.target, agents: agentsOf(best.target), score: best.score, reason, matches: ranked.flatMap((r) => r.matches),
    alternatives: ranked.slice(1).map((r) => ({ target: r.target, score: r.score })),
  };
}
