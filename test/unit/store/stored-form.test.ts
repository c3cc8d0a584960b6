import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Identified } from '../../../server/src/engine/ports';
import { openStore, storeFilePath } from '../../../server/src/store';
import { storedForm } from '../../../server/src/store/stored-form';
import { rng } from '../../support/prng';

const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

const ODD_LEAVES: unknown[] = [undefined, null, NaN, Infinity, -Infinity, -0, 0, 1.5, -3, 1e21, 'plain', 'quote " and \\ and \n', '\ud800 lone', '', true, false,
  () => 1, Symbol('s'), new Date(0), { toJSON: (k: string) => `toJSON of ${k}` }];
const KEYS = ['a', 'b', '10', '9', '__proto__', 'toJSON2', 'z', 'é', ''];

function randomValue(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 4 || r < 0.45) return ODD_LEAVES[Math.floor(next() * ODD_LEAVES.length)];
  if (r < 0.7) {
    const arr: unknown[] = [];
    const n = Math.floor(next() * 5);
    for (let i = 0; i < n; i++) arr.push(randomValue(next, depth + 1));
    if (next() < 0.1) arr[n + 2] = 'after a hole';
    return arr;
  }
  const obj: Record<string, unknown> = {};
  const n = Math.floor(next() * 5);
  for (let i = 0; i < n; i++) {
    const k = KEYS[Math.floor(next() * KEYS.length)]!;
    Object.defineProperty(obj, k, { value: randomValue(next, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return obj;
}

describe('store: stored form of a record (JSON round trip without the text, sharing the previous version)', () => {
  it('equals JSON.parse(JSON.stringify(x)) on odd values: undefined, NaN, -0, Dates, toJSON, holes, "__proto__" keys, integer-like keys', () => {
    for (let seed = 1; seed <= 400; seed++) {
      // A record is an object: the random value sits under a key (a function or symbol there is dropped).
      const value = { v: randomValue(rng(seed), 0) };
      const expected = roundTrip(value);
      const got = storedForm(value);
      assert.deepStrictEqual(got, expected, `seed ${seed}`);
      // Same text, key order included (what the journal line and a restart see).
      assert.equal(JSON.stringify(got), JSON.stringify(expected), `seed ${seed}`);
    }
  });

  it('an own "__proto__" key stays a property (as JSON.parse makes it), never the prototype', () => {
    const v = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const got = storedForm(v) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(got), Object.prototype);
    assert.deepEqual(Object.keys(got), ['__proto__', 'a']);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('throws what JSON.stringify throws: a cycle, a BigInt', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = { back: cyclic };
    assert.throws(() => storedForm(cyclic), TypeError);
    assert.throws(() => storedForm({ n: 10n }), TypeError);
  });

  it('shares the objects of the previous version that the new one kept, and copies what changed', () => {
    const previous = storedForm({ id: 'x', request: { prompt: 'p', input: { a: [1, 2] } }, steps: [{ step: 0, phases: [{ p: 'R' }] }, { step: 1, phases: [] }], history: [{ at: 't1' }, { at: 't2' }, { at: 't3' }] });
    const changedStep = { ...previous.steps[1]!, status: 'completed', when: new Date(5), gone: undefined };
    const next = { ...previous, steps: [previous.steps[0]!, changedStep], history: [...previous.history.slice(1), { at: 't4' }] };
    const got = storedForm(next, previous);
    assert.deepStrictEqual(got, roundTrip(next));
    assert.equal(got.request, previous.request, 'an unchanged part is the same object');
    assert.equal(got.steps[0], previous.steps[0]);
    assert.equal(got.history[0], previous.history[1], 'found anywhere in the previous array (a history that shifted)');
    assert.equal(got.history[1], previous.history[2]);
    assert.notEqual(got.steps[1], changedStep, 'a changed object is copied');
    assert.equal((got.steps[1] as unknown as Record<string, unknown>)['phases'], previous.steps[1]!.phases, 'its unchanged members are shared');
    // The caller's objects are not memory: changing them afterwards changes nothing stored.
    changedStep.status = 'tampered';
    (next.history[2] as { at: string }).at = 'tampered';
    assert.equal((got.steps[1] as unknown as Record<string, unknown>)['status'], 'completed');
    assert.equal(got.history[2]!.at, 't4');
  });

  it('through the journal store: an update keeps unchanged parts, the journal and a reopen read the same JSON as before', async () => {
    interface Rec extends Identified { big: { list: number[] }; n: number; at?: unknown }
    const dir = await mkdtemp(path.join(tmpdir(), 'cadre-stored-form-'));
    try {
      const store = await openStore({ file: storeFilePath(dir) });
      const repo = store.collection<Rec>('recs');
      const input: Rec = { id: 'r1', big: { list: [1, 2, 3] }, n: 1, at: new Date(1000) };
      await repo.put(input);
      input.big.list.push(4); // the caller's object is not memory
      const first = repo.get('r1')!;
      assert.deepEqual(first, { id: 'r1', big: { list: [1, 2, 3] }, n: 1, at: new Date(1000).toISOString() });
      const second = await repo.update('r1', { n: 2, at: undefined });
      assert.equal(second.big, first.big);
      assert.deepStrictEqual(second, { id: 'r1', big: { list: [1, 2, 3] }, n: 2 });
      await store.close();
      const again = await openStore({ file: storeFilePath(dir) });
      assert.deepStrictEqual(again.collection<Rec>('recs').get('r1'), second);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
