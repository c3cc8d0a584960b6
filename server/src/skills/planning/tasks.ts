/**
 * Where a plan's tasks come from: explicit input.tasks, the user stories of a previous req-ai step,
 * or the bullet list of the goal prompt.
 */
import type { PlanTask, ThreePoint } from './graph';

export interface TaskSource {
  tasks: PlanTask[];
  source: 'input' | 'stories' | 'previous-plan' | 'prompt';
  /** Acceptance criteria per task (stories), used by the default estimate heuristic. */
  criteria: Record<string, number>;
  /** Input problems (a task without id, a bad estimate): the skill reports unable. */
  errors: string[];
}

interface StoryLike { id: string; capability: string; acceptanceCriteria?: unknown[] }

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() && Number.isFinite(Number(v)) ? Number(v) : undefined;
}

/** Validates explicit tasks: ids, titles, dependsOn (array or comma list), estimates with 0 ≤ o ≤ m ≤ p. */
export function coerceTasks(value: unknown): { tasks: PlanTask[]; errors: string[] } {
  const tasks: PlanTask[] = [];
  const errors: string[] = [];
  if (!Array.isArray(value)) return { tasks, errors: ['tasks must be an array'] };
  value.forEach((raw, i) => {
    const r = (raw ?? {}) as Record<string, unknown>;
    const id = typeof r['id'] === 'string' || typeof r['id'] === 'number' ? String(r['id']) : undefined;
    if (!id) { errors.push(`task #${i + 1} has no id`); return; }
    const title = typeof r['title'] === 'string' ? r['title'] : id;
    const dep = r['dependsOn'];
    const dependsOn = Array.isArray(dep) ? dep.map(String) : typeof dep === 'string' ? dep.split(',').map((s) => s.trim()).filter(Boolean) : [];
    const task: PlanTask = { id, title, dependsOn };
    const e = r['estimate'] as Record<string, unknown> | undefined;
    if (e && typeof e === 'object') {
      const o = num(e['optimistic']); const m = num(e['likely']); const p = num(e['pessimistic']);
      if (o === undefined || m === undefined || p === undefined || o < 0 || o > m || m > p) errors.push(`task "${id}": estimate needs numbers with 0 ≤ optimistic ≤ likely ≤ pessimistic`);
      else task.estimate = { optimistic: o, likely: m, pessimistic: p } satisfies ThreePoint;
    }
    tasks.push(task);
  });
  return { tasks, errors };
}

/** Two tasks per story (build, then verify its acceptance criteria), then one release task after all. */
export function tasksFromStories(stories: StoryLike[]): { tasks: PlanTask[]; criteria: Record<string, number> } {
  const tasks: PlanTask[] = [];
  const criteria: Record<string, number> = {};
  for (const s of stories) {
    const n = Array.isArray(s.acceptanceCriteria) ? s.acceptanceCriteria.length : 0;
    tasks.push({ id: `${s.id}-build`, title: `Implement ${s.id}: ${s.capability}`, dependsOn: [] });
    tasks.push({ id: `${s.id}-verify`, title: `Test acceptance criteria of ${s.id}`, dependsOn: [`${s.id}-build`] });
    criteria[`${s.id}-build`] = n;
  }
  if (stories.length) tasks.push({ id: 'release', title: 'Integrate and release', dependsOn: stories.map((s) => `${s.id}-verify`) });
  return { tasks, criteria };
}

const BULLET = /^\s*(?:([-*•+])|(\d+)[.)])\s+(.+?)\s*$/;
const AFTER = /\s*\((?:after|depends on|needs)[:\s]+([^)]+)\)\s*$|\s+(?:after|depends on)[:\s]+(#?\w[\w-]*(?:\s*,\s*#?\w[\w-]*)*)\s*$/i;

/**
 * Tasks from the prompt's bullet list. A numbered list is a sequence (each item after the one
 * before); "-"/"*" items are independent. Either may name its dependencies explicitly at the end:
 * "(after 1, 3)" or "depends on T2" (by number or id T<n>).
 */
export function tasksFromBullets(text: string): PlanTask[] {
  const items: Array<{ title: string; numbered: boolean; refs: string[] }> = [];
  for (const line of text.split(/\r?\n/)) {
    const m = BULLET.exec(line);
    if (!m) continue;
    let title = m[3]!;
    const a = AFTER.exec(title);
    const refs = a ? (a[1] ?? a[2]!).split(',').map((s) => s.trim().replace(/^#/, '')).filter(Boolean) : [];
    if (a) title = title.slice(0, a.index).trim();
    items.push({ title: title.replace(/[.;]$/, ''), numbered: !!m[2], refs });
  }
  return items.map((it, i) => {
    const id = `T${i + 1}`;
    const explicit = it.refs.map((r) => (/^\d+$/.test(r) ? `T${r}` : r.toUpperCase())).filter((r) => r !== id && /^T\d+$/.test(r) && Number(r.slice(1)) <= items.length);
    const dependsOn = explicit.length ? explicit : it.numbered && i > 0 && items[i - 1]!.numbered ? [`T${i}`] : [];
    return { id, title: it.title, dependsOn };
  });
}

interface Prev { agentId: string; action: string; data: unknown }

/** Picks the task source: input.tasks > a previous planner-ai plan (for estimate) > previous req-ai stories > prompt bullets. */
export function resolveTasks(input: Record<string, unknown>, previous: Prev[], prompt: string): TaskSource {
  if (input['tasks'] !== undefined) {
    const { tasks, errors } = coerceTasks(input['tasks']);
    return { tasks, source: 'input', criteria: {}, errors };
  }
  for (const p of [...previous].reverse()) {
    if (p.agentId === 'planner-ai') {
      const t = (p.data as { input?: { tasks?: unknown } } | null)?.input?.tasks;
      if (Array.isArray(t) && t.length) {
        const { tasks, errors } = coerceTasks(t);
        const criteria = ((p.data as { criteria?: Record<string, number> }).criteria) ?? {};
        return { tasks, source: 'previous-plan', criteria, errors };
      }
    }
    if (p.agentId === 'req-ai') {
      const stories = (p.data as { stories?: unknown } | null)?.stories;
      if (Array.isArray(stories) && stories.length) {
        const valid = stories.filter((s): s is StoryLike => !!s && typeof (s as StoryLike).id === 'string' && typeof (s as StoryLike).capability === 'string');
        if (valid.length) return { ...tasksFromStories(valid), source: 'stories', errors: [] };
      }
    }
  }
  return { tasks: tasksFromBullets(prompt), source: 'prompt', criteria: {}, errors: [] };
}
