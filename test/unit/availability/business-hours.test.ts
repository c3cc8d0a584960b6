import assert from 'node:assert/strict';
import {
  CONTRACT_BUSINESS_HOURS,
  businessWindowOn,
  businessWindows,
  isWithinBusinessHours,
  nextTransition,
  weeklySchedule,
  zoneOffsetMs,
  zonedTimeToUtc,
} from '../../../server/src/engine/availability/business-hours';
import { AGENTS } from '../../../server/src/engine/catalog';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();
const NY = 'America/New_York';

describe('availability: business hours (07:00-19:00 America/New_York, Mon-Fri)', () => {
  describe('converting New York wall time with Intl', () => {
    it('uses EST (-05:00) in winter and EDT (-04:00) in summer', () => {
      assert.equal(zoneOffsetMs(at('2026-01-15T12:00:00Z'), NY), -5 * 3_600_000);
      assert.equal(zoneOffsetMs(at('2026-07-15T12:00:00Z'), NY), -4 * 3_600_000);
    });

    it('07:00 is 12:00Z before spring forward (2026-03-06) and 11:00Z after it (2026-03-09)', () => {
      assert.equal(iso(zonedTimeToUtc({ year: 2026, month: 3, day: 6 }, 7, 0, NY)), '2026-03-06T12:00:00.000Z');
      assert.equal(iso(zonedTimeToUtc({ year: 2026, month: 3, day: 9 }, 7, 0, NY)), '2026-03-09T11:00:00.000Z');
    });

    it('a skipped wall time moves forward by the gap; a repeated one takes the earlier instant', () => {
      // 2026-03-08 02:30 does not exist in New York; 03:30 EDT is 07:30Z.
      assert.equal(iso(zonedTimeToUtc({ year: 2026, month: 3, day: 8 }, 2, 30, NY)), '2026-03-08T07:30:00.000Z');
      // 2026-11-01 01:30 happens twice: first in EDT (05:30Z), then in EST (06:30Z).
      assert.equal(iso(zonedTimeToUtc({ year: 2026, month: 11, day: 1 }, 1, 30, NY)), '2026-11-01T05:30:00.000Z');
    });
  });

  describe('isWithinBusinessHours', () => {
    it('06:59 closed, 07:00 open, 18:59:59 open, 19:00 closed (EDT, Monday 2026-03-09)', () => {
      assert.equal(isWithinBusinessHours(at('2026-03-09T10:59:00Z')), false);
      assert.equal(isWithinBusinessHours(at('2026-03-09T10:59:59.999Z')), false);
      assert.equal(isWithinBusinessHours(at('2026-03-09T11:00:00Z')), true);
      assert.equal(isWithinBusinessHours(at('2026-03-09T22:59:59Z')), true);
      assert.equal(isWithinBusinessHours(at('2026-03-09T23:00:00Z')), false);
    });

    it('the same wall times an hour later in UTC under EST (Friday 2026-03-06)', () => {
      assert.equal(isWithinBusinessHours(at('2026-03-06T11:59:00Z')), false);
      assert.equal(isWithinBusinessHours(at('2026-03-06T12:00:00Z')), true);
      assert.equal(isWithinBusinessHours(at('2026-03-06T23:59:59Z')), true);
      assert.equal(isWithinBusinessHours(at('2026-03-07T00:00:00Z')), false);
    });

    it('a Saturday and a Sunday are closed all day', () => {
      assert.equal(isWithinBusinessHours(at('2026-03-07T16:00:00Z')), false);
      assert.equal(isWithinBusinessHours(at('2026-03-08T16:00:00Z')), false);
      assert.equal(businessWindowOn({ year: 2026, month: 3, day: 7 }), null);
    });

    it('uses the New York date, not the UTC date: Friday 20:00 EST is Saturday 01:00Z', () => {
      assert.equal(isWithinBusinessHours(at('2026-03-07T00:30:00Z')), false); // Friday 19:30 EST
      assert.equal(isWithinBusinessHours(at('2026-03-09T03:00:00Z')), false); // Sunday 23:00 EDT
    });

    it('fall back (2026-11-01): Friday 2026-10-30 opens 11:00Z, Monday 2026-11-02 opens 12:00Z', () => {
      assert.equal(iso(businessWindowOn({ year: 2026, month: 10, day: 30 })!.start), '2026-10-30T11:00:00.000Z');
      assert.equal(iso(businessWindowOn({ year: 2026, month: 11, day: 2 })!.start), '2026-11-02T12:00:00.000Z');
      assert.equal(iso(businessWindowOn({ year: 2026, month: 11, day: 2 })!.end), '2026-11-03T00:00:00.000Z');
      assert.equal(isWithinBusinessHours(at('2026-11-02T11:30:00Z')), false);
      assert.equal(isWithinBusinessHours(at('2026-11-02T12:00:00Z')), true);
    });
  });

  describe('nextTransition', () => {
    it('from Saturday before spring forward: Monday 07:00 EDT (11:00Z)', () => {
      assert.deepEqual(nextTransition(at('2026-03-07T12:00:00Z')), { at: at('2026-03-09T11:00:00Z'), to: 'open' });
    });

    it('at opening the next change is closing; at closing it is the next opening', () => {
      assert.deepEqual(nextTransition(at('2026-03-09T11:00:00Z')), { at: at('2026-03-09T23:00:00Z'), to: 'closed' });
      assert.deepEqual(nextTransition(at('2026-03-09T23:00:00Z')), { at: at('2026-03-10T11:00:00Z'), to: 'open' });
      assert.deepEqual(nextTransition(at('2026-03-09T10:59:59Z')), { at: at('2026-03-09T11:00:00Z'), to: 'open' });
    });

    it('Friday evening before fall back jumps to Monday 07:00 EST (12:00Z)', () => {
      assert.deepEqual(nextTransition(at('2026-10-30T23:00:00Z')), { at: at('2026-11-02T12:00:00Z'), to: 'open' });
    });

    it('is null for a schedule with no open day', () => {
      assert.equal(nextTransition(0, { ...CONTRACT_BUSINESS_HOURS, days: [] }), null);
    });
  });

  describe('businessWindows', () => {
    it('lists and clips the windows overlapping a range', () => {
      const ws = businessWindows(at('2026-03-06T18:00:00Z'), at('2026-03-09T12:00:00Z'));
      assert.deepEqual(ws.map((w) => [iso(w.start), iso(w.end)]), [
        ['2026-03-06T18:00:00.000Z', '2026-03-07T00:00:00.000Z'],
        ['2026-03-09T11:00:00.000Z', '2026-03-09T12:00:00.000Z'],
      ]);
    });
  });

  describe('weeklySchedule', () => {
    // Thursday 2026-03-05 15:00 EST: the week spans spring forward (Sunday 2026-03-08).
    const week = weeklySchedule(at('2026-03-05T20:00:00Z'), AGENTS, { tier: 'core' });

    it('covers 7 New York days from the local midnight of the first, 23 h on the DST day', () => {
      assert.equal(week.timeZone, NY);
      assert.equal(week.from, '2026-03-05T05:00:00.000Z');
      assert.equal(week.to, '2026-03-12T04:00:00.000Z');
      assert.deepEqual(week.days.map((d) => `${d.date} ${d.weekday} ${d.businessDay ? 'open' : 'closed'} ${d.utcOffset}`), [
        '2026-03-05 Thu open -05:00',
        '2026-03-06 Fri open -05:00',
        '2026-03-07 Sat closed -05:00',
        '2026-03-08 Sun closed -04:00',
        '2026-03-09 Mon open -04:00',
        '2026-03-10 Tue open -04:00',
        '2026-03-11 Wed open -04:00',
      ]);
      const sunday = week.days[3]!;
      assert.equal(at(sunday.end) - at(sunday.start), 23 * 3_600_000);
      assert.deepEqual([week.days[1]!.open, week.days[1]!.close], ['2026-03-06T12:00:00.000Z', '2026-03-07T00:00:00.000Z']);
      assert.deepEqual([week.days[4]!.open, week.days[4]!.close], ['2026-03-09T11:00:00.000Z', '2026-03-09T23:00:00.000Z']);
    });

    it('always_on agents are warm the whole week in one window', () => {
      const observe = week.agents.find((a) => a.agentId === 'observe-ai')!;
      assert.equal(observe.policy, 'always_warm');
      assert.deepEqual(observe.windows, [{ start: week.from, end: week.to }]);
      assert.deepEqual(observe.days.map((d) => d.warmMinutes), [1440, 1440, 1440, 1380, 1440, 1440, 1440]);
    });

    it('business_hours agents are warm each weekday 07:00-19:00 New York time', () => {
      const coder = week.agents.find((a) => a.agentId === 'coder-ai')!;
      assert.equal(coder.policy, 'business_hours');
      assert.equal(coder.available, true);
      assert.deepEqual(coder.windows.map((w) => w.start), [
        '2026-03-05T12:00:00.000Z', '2026-03-06T12:00:00.000Z', '2026-03-09T11:00:00.000Z', '2026-03-10T11:00:00.000Z', '2026-03-11T11:00:00.000Z',
      ]);
      assert.deepEqual(coder.days.map((d) => d.warmMinutes), [720, 720, 0, 0, 720, 720, 720]);
      assert.deepEqual(coder.days[2]!.windows, []);
    });

    it('commercial agents are on demand, with no warm window, and unavailable below their tier', () => {
      const cost = week.agents.find((a) => a.agentId === 'cost-ai')!;
      assert.equal(cost.availability, 'commercial');
      assert.equal(cost.policy, 'on_demand');
      assert.deepEqual(cost.windows, []);
      assert.equal(cost.available, false);
      const ultra = weeklySchedule(at('2026-03-05T20:00:00Z'), AGENTS, { tier: 'ultra' });
      assert.ok(ultra.agents.every((a) => a.available));
      assert.ok(weeklySchedule(at('2026-03-05T20:00:00Z'), AGENTS).agents.every((a) => a.available), 'no tier: nothing to say');
    });

    it('lists the 25 agents in catalog order', () => {
      assert.deepEqual(week.agents.map((a) => a.agentId), AGENTS.map((a) => a.id));
    });

    it('fall-back week: the Sunday has 25 h and Monday opens at 12:00Z', () => {
      const fall = weeklySchedule(at('2026-10-31T16:00:00Z'), [{ id: 'x', availability: 'business_hours' }]);
      const sunday = fall.days[1]!;
      assert.equal(sunday.date, '2026-11-01');
      assert.equal(at(sunday.end) - at(sunday.start), 25 * 3_600_000);
      assert.equal(fall.agents[0]!.windows[0]!.start, '2026-11-02T12:00:00.000Z');
    });
  });
});
