/**
 * Task graphs: validation, cycle detection, topological order, parallel groups (levels) and the
 * critical path (longest path by PERT expected duration), plus three-point estimates.
 */

export interface ThreePoint {
  optimistic: number;
  likely: number;
  pessimistic: number;
}

export interface PlanTask {
  id: string;
  title: string;
  dependsOn: string[];
  estimate?: ThreePoint;
}

export interface TaskEstimate extends ThreePoint {
  id: string;
  /** PERT mean (o + 4m + p) / 6. */
  expected: number;
  /** (p - o) / 6. */
  stdDev: number;
  /** 'given' or the heuristic that produced it. */
  basis: 'given' | 'heuristic';
  heuristic?: string;
}

export interface ScheduledTask {
  id: string;
  title: string;
  dependsOn: string[];
  level: number;
  expected: number;
  earliestStart: number;
  earliestFinish: number;
  slack: number;
  critical: boolean;
}

export interface Plan {
  order: string[];
  /** Parallel groups: level n holds tasks whose dependencies are all in earlier levels. */
  groups: string[][];
  criticalPath: string[];
  /** Expected duration of the critical path (sum of PERT means). */
  duration: number;
  tasks: ScheduledTask[];
  unit: string;
}

export type PlanResult = { ok: true; plan: Plan; estimates: TaskEstimate[] } | { ok: false; reason: string; cycle?: string[] };

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** PERT three-point estimate. */
export function pert(e: ThreePoint): { expected: number; stdDev: number; variance: number } {
  const expected = (e.optimistic + 4 * e.likely + e.pessimistic) / 6;
  const stdDev = (e.pessimistic - e.optimistic) / 6;
  return { expected: round(expected), stdDev: round(stdDev), variance: stdDev * stdDev };
}

const HEAVY = /\b(integrat\w*|migrat\w*|design\w*|architect\w*|refactor\w*|security|auth\w*|payment\w*|billing|sync\w*|import\w*|export\w*|search|report\w*|notification\w*|deploy\w*|infrastructure|performance)\b/i;
const LIGHT = /\b(test\w*|document\w*|docs?|review\w*|configur\w*|rename\w*|copy|text|label\w*|readme|bump|release)\b/i;

/**
 * Default estimate, in days, when a task has none: likely = 1 day, ×2 when the title names
 * complex work (integrate, migrate, design, auth, payment...), ×0.5 when it names light work
 * (test, document, review, configure...), +0.25 day per acceptance criterion beyond the first,
 * +0.1 day per 5 words of title beyond 8; optimistic = 0.5 × likely, pessimistic = 2.5 × likely
 * (right-skewed: tasks overrun more often than they finish early).
 */
export function heuristicEstimate(title: string, criteria = 0): { estimate: ThreePoint; heuristic: string } {
  let likely = 1;
  const why: string[] = ['base 1 day'];
  if (HEAVY.test(title)) { likely *= 2; why.push(`×2 complex work ("${HEAVY.exec(title)![0]}")`); }
  else if (LIGHT.test(title)) { likely *= 0.5; why.push(`×0.5 light work ("${LIGHT.exec(title)![0]}")`); }
  if (criteria > 1) { likely += 0.25 * (criteria - 1); why.push(`+${0.25 * (criteria - 1)} for ${criteria} acceptance criteria`); }
  const words = title.split(/\s+/).filter(Boolean).length;
  if (words > 8) { const add = round(0.1 * Math.floor((words - 8) / 5)); if (add > 0) { likely += add; why.push(`+${add} for a long title`); } }
  likely = round(likely);
  return { estimate: { optimistic: round(0.5 * likely), likely, pessimistic: round(2.5 * likely) }, heuristic: `${why.join(', ')}; o = 0.5m, p = 2.5m` };
}

export function estimateTasks(tasks: PlanTask[], criteriaCount: Record<string, number> = {}): TaskEstimate[] {
  return tasks.map((t): TaskEstimate => {
    if (t.estimate) {
      const { expected, stdDev } = pert(t.estimate);
      return { id: t.id, ...t.estimate, expected, stdDev, basis: 'given' };
    }
    const h = heuristicEstimate(t.title, criteriaCount[t.id] ?? 0);
    const { expected, stdDev } = pert(h.estimate);
    return { id: t.id, ...h.estimate, expected, stdDev, basis: 'heuristic', heuristic: h.heuristic };
  });
}

/** A dependency cycle as a closed path (first id repeated at the end), or undefined. */
export function findCycle(tasks: PlanTask[]): string[] | undefined {
  const deps = new Map(tasks.map((t) => [t.id, t.dependsOn]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 1);
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d)) continue;
      if (state.get(d) === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (!state.has(d)) { const c = visit(d); if (c) return c; }
    }
    stack.pop();
    state.set(id, 2);
    return undefined;
  };
  for (const t of tasks) if (!state.has(t.id)) { const c = visit(t.id); if (c) return c; }
  return undefined;
}

/** Builds the plan: validation, order, groups, critical path. Unit is the estimates' unit (days by default). */
export function buildPlan(tasks: PlanTask[], estimates: TaskEstimate[] = estimateTasks(tasks), unit = 'days'): PlanResult {
  if (!tasks.length) return { ok: false, reason: 'no tasks' };
  const ids = new Set<string>();
  for (const t of tasks) {
    if (ids.has(t.id)) return { ok: false, reason: `duplicate task id "${t.id}"` };
    ids.add(t.id);
  }
  for (const t of tasks) for (const d of t.dependsOn) if (!ids.has(d)) return { ok: false, reason: `task "${t.id}" depends on unknown task "${d}"` };
  const cycle = findCycle(tasks);
  if (cycle) return { ok: false, reason: `dependency cycle: ${cycle.join(' → ')}`, cycle };
  // Kahn's algorithm, stable in input order.
  const indeg = new Map(tasks.map((t) => [t.id, t.dependsOn.length]));
  const dependents = new Map<string, string[]>(tasks.map((t) => [t.id, []]));
  for (const t of tasks) for (const d of t.dependsOn) dependents.get(d)!.push(t.id);
  const order: string[] = [];
  const ready = tasks.filter((t) => t.dependsOn.length === 0).map((t) => t.id);
  while (ready.length) {
    const id = ready.shift()!;
    order.push(id);
    for (const n of dependents.get(id)!) {
      indeg.set(n, indeg.get(n)! - 1);
      if (indeg.get(n) === 0) ready.push(n);
    }
  }
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const dur = new Map(estimates.map((e) => [e.id, e.expected]));
  const level = new Map<string, number>();
  const es = new Map<string, number>();
  const ef = new Map<string, number>();
  const via = new Map<string, string | undefined>();
  for (const id of order) {
    const t = byId.get(id)!;
    level.set(id, t.dependsOn.length ? Math.max(...t.dependsOn.map((d) => level.get(d)!)) + 1 : 0);
    let start = 0;
    let from: string | undefined;
    for (const d of t.dependsOn) if (from === undefined || ef.get(d)! > start) { start = ef.get(d)!; from = d; }
    es.set(id, round(start));
    ef.set(id, round(start + (dur.get(id) ?? 0)));
    via.set(id, from);
  }
  const duration = Math.max(...order.map((id) => ef.get(id)!));
  // Latest finish, backwards, for slack.
  const lf = new Map<string, number>();
  for (const id of [...order].reverse()) {
    const next = dependents.get(id)!;
    lf.set(id, next.length ? Math.min(...next.map((n) => lf.get(n)! - (dur.get(n) ?? 0))) : duration);
  }
  const end = order.find((id) => ef.get(id) === duration)!;
  const criticalPath: string[] = [];
  for (let cur: string | undefined = end; cur !== undefined; cur = via.get(cur)) criticalPath.unshift(cur);
  const critical = new Set(criticalPath);
  const groups: string[][] = [];
  for (const id of order) (groups[level.get(id)!] ??= []).push(id);
  const scheduled: ScheduledTask[] = order.map((id) => {
    const t = byId.get(id)!;
    return { id, title: t.title, dependsOn: t.dependsOn, level: level.get(id)!, expected: dur.get(id) ?? 0, earliestStart: es.get(id)!, earliestFinish: ef.get(id)!, slack: round(lf.get(id)! - ef.get(id)!), critical: critical.has(id) };
  });
  return { ok: true, plan: { order, groups, criticalPath, duration: round(duration), tasks: scheduled, unit }, estimates };
}

/** PERT totals for a set of tasks (a path): sum of means, σ = √(Σ σ²), and P50/P85/P95 bounds (normal approximation). */
export function pathEstimate(ids: string[], estimates: TaskEstimate[]): { expected: number; stdDev: number; p50: number; p85: number; p95: number } {
  const byId = new Map(estimates.map((e) => [e.id, e]));
  const sel = ids.map((id) => byId.get(id)).filter((e): e is TaskEstimate => !!e);
  const expected = sel.reduce((s, e) => s + (e.optimistic + 4 * e.likely + e.pessimistic) / 6, 0);
  const stdDev = Math.sqrt(sel.reduce((s, e) => s + ((e.pessimistic - e.optimistic) / 6) ** 2, 0));
  return { expected: round(expected), stdDev: round(stdDev), p50: round(expected), p85: round(expected + 1.04 * stdDev), p95: round(expected + 1.645 * stdDev) };
}
