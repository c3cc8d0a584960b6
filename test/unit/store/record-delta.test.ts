import assert from 'node:assert/strict';
import { applyDelta, deltaProblem, recordDelta } from '../../../server/src/store/record-delta';
import { storedForm } from '../../../server/src/store/stored-form';
import { rng } from '../../support/prng';

type Rec = Record<string, unknown>;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/** A random edit of an execution-shaped record, made as the engine makes them: a new version sharing what it kept. */
function edit(rec: Rec, r: () => number): Rec {
  const steps = rec['steps'] as Rec[];
  const i = Math.floor(r() * steps.length);
  switch (Math.floor(r() * 7)) {
    case 0: return { ...rec, steps: steps.map((s, k) => (k === i ? { ...s, status: `s${Math.floor(r() * 5)}`, attempts: Math.floor(r() * 3) } : s)), updatedAt: `t${r()}` };
    case 1: return { ...rec, steps: [...steps, { step: steps.length, status: 'pending', gates: { results: [{ gate: 'g', status: 'pass' }] } }] };
    case 2: return { ...rec, history: [...(rec['history'] as number[]).slice(1), Math.floor(r() * 100)] }; // shifted: whole array
    case 3: {
      const { note: _drop, ...rest } = rec;
      return r() < 0.5 ? rest : { ...rec, note: { text: 'n', deep: { deeper: { deepest: { v: r() } } } } };
    }
    case 4: return { ...rec, steps: steps.map((s, k) => (k === i ? { ...s, gates: { ...(s['gates'] as Rec), failures: [{ gate: 'x', reason: `r${r()}` }] } } : s)) };
    case 5: return { ...rec, steps: steps.slice(0, Math.max(1, steps.length - 1)) }; // shrunk: whole array
    default: return { ...rec, status: r() < 0.5 ? 'running' : 'completed', output: r() < 0.3 ? null : { summary: `o${r()}` } };
  }
}

describe('store: record deltas (what the journal carries for an update)', () => {
  it('replaying the delta over a copy of the base gives exactly the new version, over 2,000 seeded edits', () => {
    const r = rng(11);
    let rec = storedForm<Rec>({ id: 'exec_1', status: 'queued', history: Array.from({ length: 10 }, (_, k) => k), steps: [{ step: 0, status: 'pending', gates: { results: [] } }] });
    for (let n = 0; n < 2_000; n++) {
      const next = storedForm(edit(rec, r), rec);
      const changes = recordDelta(rec, next);
      const replayed = changes === null ? clone(next) : applyDelta(clone(rec), clone(changes));
      assert.equal(typeof replayed, 'object', `edit ${n}: the delta applies (${String(replayed)})`);
      assert.equal(JSON.stringify(replayed), JSON.stringify(next), `edit ${n}: replay equals the new version, key order included`);
      assert.equal(deltaProblem(clone(changes ?? [])), null, `edit ${n}: the journalled form passes the open-time check`);
      rec = next;
    }
  });

  it('carries only what changed: one step of a nine-step record with large gate tables', () => {
    const gates = { results: Array.from({ length: 21 }, (_, g) => ({ gate: `gate-${g}`, status: 'pass', reason: 'a reason long enough to matter in bytes' })) };
    const base = storedForm<Rec>({ id: 'wf_1', status: 'running', steps: Array.from({ length: 9 }, (_, s) => ({ step: s, status: 'completed', gates })) });
    const steps = (base['steps'] as Rec[]).map((s, k) => (k === 4 ? { ...s, status: 'running' } : s));
    const next = storedForm({ ...base, steps, updatedAt: 'now' }, base);
    const changes = recordDelta(base, next)!;
    assert.deepEqual(changes, [[['steps', 4, 'status'], 'running'], [['updatedAt'], 'now']]);
    assert.ok(JSON.stringify(changes).length * 50 < JSON.stringify(next).length, 'the delta is a small fraction of the record');
  });

  it('deletes members, grows arrays, and assigns a mostly rewritten array whole', () => {
    const base = storedForm<Rec>({ id: 'a', gone: 1, list: [1, 2, 3, 4], grow: [{ k: 1 }] });
    const next = storedForm<Rec>({ id: 'a', list: [9, 8, 7, 4], grow: [base['grow'] as unknown[]][0]!.concat([{ k: 2 }]) }, base);
    assert.deepEqual(recordDelta(base, next), [[['list'], [9, 8, 7, 4]], [['grow', 1], { k: 2 }], [['gone']]]);
  });

  it('a bounded history that moved on is journalled as a shift: k dropped, the new items appended', () => {
    const points = Array.from({ length: 100 }, (_, i) => ({ at: `t${i}`, score: i % 2 }));
    const base = storedForm<Rec>({ id: 'agent', qualityHistory: points });
    // As the engine makes it: the stored points it keeps, and one more.
    const next = storedForm<Rec>({ id: 'agent', qualityHistory: [...(base['qualityHistory'] as unknown[]).slice(1), { at: 't100', score: 1 }] }, base);
    const changes = recordDelta(base, next)!;
    assert.deepEqual(changes, [[['qualityHistory'], 1, [{ at: 't100', score: 1 }]]]);
    assert.equal(JSON.stringify(applyDelta(clone(base), clone(changes))), JSON.stringify(next));
    assert.match(String(deltaProblem([[['h'], 0, []]])), /shift/);
    assert.match(String(applyDelta({ id: 'x', h: [1] }, [[['h'], 2, []]])), /at least 2/);
  });

  it('a "__proto__" member is replayed as an own property, never as the prototype', () => {
    const base = JSON.parse('{"id":"p","m":{"__proto__":{"a":1}}}') as Rec;
    const next = JSON.parse('{"id":"p","m":{"__proto__":{"a":2}}}') as Rec;
    const out = applyDelta(clone(base), recordDelta(base, next)!) as Rec;
    assert.equal(Object.getPrototypeOf(out['m']), Object.prototype);
    assert.equal(JSON.stringify(out), JSON.stringify(next));
  });

  it('gives up (null: write the record whole) past 48 changes, and reports deltas that do not fit the record', () => {
    const base = storedForm<Rec>(Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`k${k}`, k])));
    const next = storedForm<Rec>(Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`k${k}`, k + 1])), base);
    assert.equal(recordDelta(base, next), null);
    assert.match(String(applyDelta({ id: 'x' }, [[['missing', 'deep'], 1]])), /not an object or array/);
    assert.match(String(applyDelta({ id: 'x', a: [1] }, [[['a', 5], 1]])), /does not fit/);
    assert.match(String(deltaProblem([[['a', -1], 1]])), /invalid path/);
    assert.match(String(deltaProblem([[[]]])), /whole record/);
  });
});
