/**
 * Business hours (contract, "Availability"): warm from 07:00 to 19:00 Eastern Time, Monday to
 * Friday. Computed in America/New_York with Intl, so daylight saving moves the UTC instants
 * (07:00 is 12:00Z in winter, 11:00Z in summer); there is no fixed offset anywhere.
 *
 * The window is half-open: 07:00:00.000 is open, 19:00:00.000 is closed. Public holidays are not
 * observed (the contract names none).
 *
 * @example
 * isWithinBusinessHours(Date.parse('2026-03-09T11:00:00Z'));   // true: Monday 07:00 EDT
 * nextTransition(Date.parse('2026-03-07T12:00:00Z'));          // Monday 2026-03-09 07:00 EDT, to 'open'
 * weeklySchedule(Date.now(), AGENTS, { tier: 'core' });        // a week grid for the API, CLI, sidebar
 */
import { tierAllows } from '../catalog/products';
import type { AvailabilityMode, IntelligenceTier, TierTag } from '../catalog/enums';

/** A weekly opening rule in one time zone. */
export interface BusinessHours {
  /** IANA zone. */
  readonly timeZone: string;
  /** Local opening hour, inclusive (0-23). */
  readonly openHour: number;
  /** Local closing hour, exclusive (1-24, after openHour). */
  readonly closeHour: number;
  /** Open weekdays, 0 = Sunday ... 6 = Saturday. */
  readonly days: readonly number[];
}

/** The contract's window: 07:00-19:00 America/New_York, Monday to Friday. */
export const CONTRACT_BUSINESS_HOURS: BusinessHours = Object.freeze({
  timeZone: 'America/New_York',
  openHour: 7,
  closeHour: 19,
  days: Object.freeze([1, 2, 3, 4, 5]),
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

// ---------------------------------------------------------------------------------------------
// Zoned time with Intl
// ---------------------------------------------------------------------------------------------

/** A local calendar date (month 1-12). */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

interface LocalParts extends LocalDate {
  hour: number;
  minute: number;
  second: number;
}

// Formatters are costly to build; one per zone is enough.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock reading of `instantMs` in `timeZone` (to the second). */
function localParts(instantMs: number, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(instantMs)) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour! % 24, minute: parts.minute!, second: parts.second! };
}

/** The zone's offset from UTC at `instantMs`, in ms (negative west of Greenwich: -4 h for EDT). */
export function zoneOffsetMs(instantMs: number, timeZone: string): number {
  const p = localParts(instantMs, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instantMs / 1000) * 1000;
}

/**
 * The instant at which the wall clock in `timeZone` reads `date` `hour`:`minute`. A wall-clock time
 * that does not exist (skipped by spring-forward) is moved forward by the gap (02:30 → 03:30 EDT);
 * an ambiguous one (repeated at fall-back) maps to the earlier instant. Neither happens to 07:00 or
 * 19:00 in New York, where clocks change at 02:00.
 */
export function zonedTimeToUtc(date: LocalDate, hour: number, minute: number, timeZone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day, hour, minute);
  // Try the offsets in force a day either side of the wanted time: one of them is the right one.
  const candidates = [zoneOffsetMs(wall - DAY, timeZone), zoneOffsetMs(wall + DAY, timeZone)]
    .map((offset) => wall - offset)
    .filter((instant) => localWallMs(instant, timeZone) === wall)
    .sort((a, b) => a - b);
  if (candidates[0] !== undefined) return candidates[0];
  // In a gap: the later offset (after the jump) carries the wall time forward past it.
  return wall - zoneOffsetMs(wall - DAY, timeZone);
}

function localWallMs(instantMs: number, timeZone: string): number {
  return instantMs + zoneOffsetMs(instantMs, timeZone);
}

/** The local date `days` after `date` (calendar arithmetic, independent of any zone). */
export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** 0 = Sunday ... 6 = Saturday. */
export function weekdayOf(date: LocalDate): number {
  return new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
}

/** `YYYY-MM-DD`. */
export function formatLocalDate(date: LocalDate): string {
  return `${String(date.year).padStart(4, '0')}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;
}

/** The local date containing `instantMs` in the schedule's zone. */
export function localDateOf(instantMs: number, hours: BusinessHours = CONTRACT_BUSINESS_HOURS): LocalDate {
  const { year, month, day } = localParts(instantMs, hours.timeZone);
  return { year, month, day };
}

// ---------------------------------------------------------------------------------------------
// The window
// ---------------------------------------------------------------------------------------------

/** An interval of instants, epoch ms, `[start, end)`. */
export interface Interval {
  start: number;
  end: number;
}

/** The opening interval of a local date, or null on a closed weekday. */
export function businessWindowOn(date: LocalDate, hours: BusinessHours = CONTRACT_BUSINESS_HOURS): Interval | null {
  if (!hours.days.includes(weekdayOf(date))) return null;
  const start = zonedTimeToUtc(date, hours.openHour, 0, hours.timeZone);
  const end = hours.closeHour === 24 ? zonedTimeToUtc(addDays(date, 1), 0, 0, hours.timeZone) : zonedTimeToUtc(date, hours.closeHour, 0, hours.timeZone);
  return { start, end };
}

/** True when `instantMs` falls inside the window (07:00 inclusive, 19:00 exclusive, local time). */
export function isWithinBusinessHours(instantMs: number, hours: BusinessHours = CONTRACT_BUSINESS_HOURS): boolean {
  const w = businessWindowOn(localDateOf(instantMs, hours), hours);
  return w !== null && instantMs >= w.start && instantMs < w.end;
}

/** The windows that overlap `[fromMs, toMs)`, clipped to it, in order. */
export function businessWindows(fromMs: number, toMs: number, hours: BusinessHours = CONTRACT_BUSINESS_HOURS): Interval[] {
  const out: Interval[] = [];
  // A window never spans more than a day, so starting one local day early catches any overlap.
  for (let date = addDays(localDateOf(fromMs, hours), -1); ; date = addDays(date, 1)) {
    const dayStart = zonedTimeToUtc(date, 0, 0, hours.timeZone);
    if (dayStart >= toMs) break;
    const w = businessWindowOn(date, hours);
    if (w !== null && w.end > fromMs && w.start < toMs) out.push({ start: Math.max(w.start, fromMs), end: Math.min(w.end, toMs) });
  }
  return out;
}

/** The next change of the window after `instantMs` (strictly later). */
export interface Transition {
  at: number;
  /** What the window becomes at `at`. */
  to: 'open' | 'closed';
}

/** The next open or close instant after `instantMs`; null only for a schedule with no open day. */
export function nextTransition(instantMs: number, hours: BusinessHours = CONTRACT_BUSINESS_HOURS): Transition | null {
  if (hours.days.length === 0) return null;
  const today = localDateOf(instantMs, hours);
  // At most a week of closed days separates two windows.
  for (let k = 0; k <= 8; k++) {
    const w = businessWindowOn(addDays(today, k), hours);
    if (w === null) continue;
    if (w.start > instantMs) return { at: w.start, to: 'open' };
    if (w.end > instantMs) return { at: w.end, to: 'closed' };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The week grid
// ---------------------------------------------------------------------------------------------

/**
 * How an availability mode keeps an agent warm (docs/decisions.md, "Commercial availability"):
 * - `always_warm`: always_on agents, warm around the clock;
 * - `business_hours`: warm in the window, on demand (with a warm-up) outside it;
 * - `on_demand`: commercial agents, not pre-warmed, available at any hour to PRO/ULTRA tiers,
 *   woken by a request and cooled after the idle timeout.
 */
export type WarmPolicy = 'always_warm' | 'business_hours' | 'on_demand';

/** The warm policy of an availability mode. */
export function warmPolicyOf(mode: AvailabilityMode): WarmPolicy {
  switch (mode) {
    case 'always_on':
      return 'always_warm';
    case 'business_hours':
      return 'business_hours';
    case 'commercial':
      return 'on_demand';
  }
}

/** A window as rendered: ISO 8601 UTC instants. */
export interface IsoWindow {
  start: string;
  end: string;
}

/** One local day (America/New_York) of the grid. */
export interface ScheduleDay {
  /** Local date, `YYYY-MM-DD`. */
  date: string;
  weekday: Weekday;
  businessDay: boolean;
  /** The day's own bounds as instants (23 or 25 hours apart on DST days). */
  start: string;
  end: string;
  /** Opening and closing instants, null on a closed day. */
  open: string | null;
  close: string | null;
  /** UTC offset at opening (or at noon on a closed day), e.g. `-04:00`. */
  utcOffset: string;
}

/** One agent's week. */
export interface AgentWeek {
  agentId: string;
  availability: AvailabilityMode;
  policy: WarmPolicy;
  /** False for a commercial agent the given tier does not include; true when no tier is given. */
  available: boolean;
  /** The instants it is kept warm, merged and clipped to the grid. Empty for on-demand agents. */
  windows: IsoWindow[];
  /** Per grid day: its warm windows and warm minutes. */
  days: { date: string; windows: IsoWindow[]; warmMinutes: number }[];
}

/** A renderable week: 7 local days from the local midnight of the day containing `fromMs`. */
export interface WeeklySchedule {
  timeZone: string;
  from: string;
  to: string;
  days: ScheduleDay[];
  agents: AgentWeek[];
}

/** The catalog fields the grid needs (an `AgentDef` fits). */
export interface ScheduledAgent {
  id: string;
  availability: AvailabilityMode;
  tierTag?: TierTag | null;
}

const isoOf = (ms: number): string => new Date(ms).toISOString();
const toIso = (i: Interval): IsoWindow => ({ start: isoOf(i.start), end: isoOf(i.end) });

function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.abs(offsetMs) / 60_000;
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

interface GridDay {
  local: LocalDate;
  bounds: Interval;
  window: Interval | null;
}

function gridDays(fromMs: number, hours: BusinessHours): GridDay[] {
  const first = localDateOf(fromMs, hours);
  return Array.from({ length: 7 }, (_, k) => {
    const local = addDays(first, k);
    const bounds = { start: zonedTimeToUtc(local, 0, 0, hours.timeZone), end: zonedTimeToUtc(addDays(local, 1), 0, 0, hours.timeZone) };
    return { local, bounds, window: businessWindowOn(local, hours) };
  });
}

function describeDay(d: GridDay, hours: BusinessHours): ScheduleDay {
  const at = d.window?.start ?? d.bounds.start + 12 * HOUR;
  return {
    date: formatLocalDate(d.local),
    weekday: WEEKDAYS[weekdayOf(d.local)]!,
    businessDay: d.window !== null,
    start: isoOf(d.bounds.start),
    end: isoOf(d.bounds.end),
    open: d.window === null ? null : isoOf(d.window.start),
    close: d.window === null ? null : isoOf(d.window.end),
    utcOffset: formatOffset(zoneOffsetMs(at, hours.timeZone)),
  };
}

/** Warm intervals of one grid day under a policy. */
function warmOn(day: GridDay, policy: WarmPolicy): Interval[] {
  if (policy === 'always_warm') return [day.bounds];
  if (policy === 'business_hours') return day.window === null ? [] : [day.window];
  return [];
}

function mergeAdjacent(intervals: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const i of intervals) {
    const last = out.at(-1);
    if (last !== undefined && last.end >= i.start) last.end = Math.max(last.end, i.end);
    else out.push({ ...i });
  }
  return out;
}

/**
 * The coming week as a grid: 7 local days (America/New_York) starting at the local midnight of
 * the day containing `fromMs`, and per agent its warm windows as UTC instants. A whole first day
 * (rather than `fromMs` itself) keeps every column of a week grid a full day.
 *
 * `tier` marks commercial agents the tier does not include as `available: false`; without it the
 * grid says nothing about entitlement.
 */
export function weeklySchedule(
  fromMs: number,
  agents: readonly ScheduledAgent[],
  opts: { tier?: IntelligenceTier; hours?: BusinessHours } = {},
): WeeklySchedule {
  const hours = opts.hours ?? CONTRACT_BUSINESS_HOURS;
  const days = gridDays(fromMs, hours);
  return {
    timeZone: hours.timeZone,
    from: isoOf(days[0]!.bounds.start),
    to: isoOf(days[6]!.bounds.end),
    days: days.map((d) => describeDay(d, hours)),
    agents: agents.map((agent) => {
      const policy = warmPolicyOf(agent.availability);
      const perDay = days.map((d) => ({ date: formatLocalDate(d.local), intervals: warmOn(d, policy) }));
      return {
        agentId: agent.id,
        availability: agent.availability,
        policy,
        available: opts.tier === undefined || tierAllows(opts.tier, agent.tierTag ?? null),
        windows: mergeAdjacent(perDay.flatMap((d) => d.intervals)).map(toIso),
        days: perDay.map((d) => ({
          date: d.date,
          windows: d.intervals.map(toIso),
          warmMinutes: d.intervals.reduce((sum, i) => sum + (i.end - i.start) / 60_000, 0),
        })),
      };
    }),
  };
}
