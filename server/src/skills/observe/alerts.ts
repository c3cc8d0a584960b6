/**
 * Alert rules over ingested series: `{name, expr: {metric, labels?, op, threshold, for?}, severity}`.
 * A rule matches every series of that metric whose labels include the rule's labels. Like Prometheus'
 * `for`, a condition must hold on consecutive points for at least that long before the alert fires
 * (no `for`: it fires on the first point); each episode is reported from the first point that held to
 * the last, with the points that fired it, and is `firing` when it still holds at the last point
 * (`resolved` otherwise). The values compared are the series' own (no rate is taken). A `for` needs
 * timestamps: on samples without them a rule with `for` never fires (one without `for` still does).
 */
import { iso, seriesKey, type Point, type Series } from './model';

export type AlertOp = '>' | '<' | '>=' | '<=';
export interface AlertRule {
  name: string;
  expr: { metric: string; labels?: Record<string, string>; op: AlertOp; threshold: number; for?: string };
  severity: string;
}

export interface FiringPoint { time: string | null; value: number; file: string; line?: number }
export interface AlertEpisode {
  rule: string;
  severity: string;
  series: string;
  state: 'firing' | 'resolved';
  /** First point that held, the point at which `for` was reached, the last point that held. */
  since: string | null;
  firedAt: string | null;
  until: string | null;
  points: FiringPoint[];
  pointCount: number;
}
export interface RuleResult {
  rule: string;
  severity: string;
  condition: string;
  seriesMatched: number;
  pointsEvaluated: number;
  episodes: AlertEpisode[];
}

const OPS: ReadonlySet<string> = new Set(['>', '<', '>=', '<=']);

/** `5m`, `30s`, `1h30m`, `2d` in ms; undefined when unreadable. */
export function parseDuration(s: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  let total = 0;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(s))) { total += Number(m[1]) * unit[m[2]!]!; at = re.lastIndex; }
  return at === s.length && s.length > 0 ? total : undefined;
}

/** Validates rules as given (an array, or {rules: [...]}); the error names the rule and the field. */
export function parseRules(raw: unknown): { rules: AlertRule[] } | { error: string } {
  const list = Array.isArray(raw) ? raw : raw && typeof raw === 'object' && Array.isArray((raw as { rules?: unknown }).rules) ? (raw as { rules: unknown[] }).rules : undefined;
  if (!list) return { error: 'rules must be an array of {name, expr: {metric, labels?, op, threshold, for?}, severity}' };
  const rules: AlertRule[] = [];
  for (let i = 0; i < list.length; i++) {
    const r = list[i] as Record<string, unknown> | null;
    const at = `rules[${i}]`;
    if (!r || typeof r !== 'object') return { error: `${at} is not an object` };
    if (typeof r['name'] !== 'string' || !r['name'].trim()) return { error: `${at}.name is missing` };
    const e = r['expr'] as Record<string, unknown> | null;
    if (!e || typeof e !== 'object') return { error: `${at}.expr must be {metric, labels?, op, threshold, for?}` };
    if (typeof e['metric'] !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(e['metric'])) return { error: `${at}.expr.metric must be a metric name` };
    if (typeof e['op'] !== 'string' || !OPS.has(e['op'])) return { error: `${at}.expr.op must be one of >, <, >=, <=` };
    if (typeof e['threshold'] !== 'number' || !Number.isFinite(e['threshold'])) return { error: `${at}.expr.threshold must be a number` };
    let labels: Record<string, string> | undefined;
    if (e['labels'] !== undefined) {
      if (!e['labels'] || typeof e['labels'] !== 'object' || Array.isArray(e['labels'])) return { error: `${at}.expr.labels must be an object of strings` };
      labels = Object.fromEntries(Object.entries(e['labels'] as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
    }
    if (e['for'] !== undefined && (typeof e['for'] !== 'string' || parseDuration(e['for']) === undefined)) return { error: `${at}.expr.for must be a duration such as 30s, 5m or 1h` };
    const severity = r['severity'] === undefined ? 'warning' : r['severity'];
    if (typeof severity !== 'string') return { error: `${at}.severity must be a string` };
    rules.push({ name: r['name'], expr: { metric: e['metric'], ...(labels ? { labels } : {}), op: e['op'] as AlertOp, threshold: e['threshold'], ...(typeof e['for'] === 'string' ? { for: e['for'] } : {}) }, severity });
  }
  return { rules };
}

function holds(v: number, op: AlertOp, th: number): boolean {
  return op === '>' ? v > th : op === '<' ? v < th : op === '>=' ? v >= th : v <= th;
}

export const MAX_POINTS_PER_EPISODE = 50;

export function evaluateRule(rule: AlertRule, series: readonly Series[]): RuleResult {
  const { metric, labels = {}, op, threshold } = rule.expr;
  const forMs = rule.expr.for ? parseDuration(rule.expr.for)! : 0;
  const matched = series.filter((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  const res: RuleResult = {
    rule: rule.name, severity: rule.severity, seriesMatched: matched.length, pointsEvaluated: 0, episodes: [],
    condition: `${metric}${Object.keys(labels).length ? `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''} ${op} ${threshold}${forMs ? ` for ${rule.expr.for}` : ''}`,
  };
  for (const s of matched) {
    res.pointsEvaluated += s.points.length;
    let streak: Point[] = [];
    const close = (stillHolds: boolean) => {
      if (!streak.length) return;
      const first = streak[0]!; const last = streak[streak.length - 1]!;
      // With `for`, the alert fires at the first point at which the condition has held that long.
      const fired = forMs === 0 ? first : streak.find((p) => p.t !== null && first.t !== null && p.t - first.t >= forMs);
      if (fired) {
        res.episodes.push({
          rule: rule.name, severity: rule.severity, series: seriesKey(s.name, s.labels), state: stillHolds ? 'firing' : 'resolved',
          since: iso(first.t), firedAt: iso(fired.t), until: iso(last.t),
          points: streak.slice(0, MAX_POINTS_PER_EPISODE).map((p) => ({ time: iso(p.t), value: p.v, file: s.file, ...(p.line !== undefined ? { line: p.line } : {}) })),
          pointCount: streak.length,
        });
      }
      streak = [];
    };
    for (const p of s.points) {
      if (holds(p.v, op, threshold)) streak.push(p);
      else close(false);
    }
    close(true);
  }
  return res;
}
