import assert from 'node:assert/strict';
import {
  canonicalData,
  canonicalize,
  chainRecord,
  ChainVerifier,
  GENESIS_HASH,
  hashRecord,
  verifyChain,
  type ChainLine,
} from '../../../server/src/engine/audit/chain';
import type { AuditRecord } from '../../../server/src/engine/ports';

function build(n: number): AuditRecord[] {
  const out: AuditRecord[] = [];
  let prev: AuditRecord | null = null;
  for (let i = 0; i < n; i++) {
    prev = chainRecord(prev, {
      ts: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
      kind: 'gate.result',
      executionId: `exec_${i % 3}`,
      actor: 'engine',
      data: { i, gate: 'tests-pass', passed: i % 2 === 0 },
    });
    out.push(prev);
  }
  return out;
}

const lines = (recs: unknown[], file = 'audit-2025-01-01.jsonl'): ChainLine[] =>
  recs.map((r, i) => ({ file, line: i + 1, text: typeof r === 'string' ? r : JSON.stringify(r) }));

describe('audit chain (pure)', () => {
  it('GENESIS_HASH is 64 zeros; the first record links to it with seq 1', () => {
    assert.equal(GENESIS_HASH, '0'.repeat(64));
    const [first] = build(1);
    assert.equal(first!.seq, 1);
    assert.equal(first!.prevHash, GENESIS_HASH);
    assert.match(first!.hash, /^[0-9a-f]{64}$/);
  });

  it('canonical form sorts keys at every depth, drops undefined, keeps array order', () => {
    assert.equal(canonicalize({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
    assert.equal(canonicalize({ when: new Date(0) }), '{"when":"1970-01-01T00:00:00.000Z"}');
    assert.equal(canonicalize([undefined, NaN]), '[null,null]');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.throws(() => canonicalize(cyclic), /circular/);
  });

  it('the hash does not depend on property order (top level or in data)', () => {
    const base = { seq: 1, ts: '2025-01-01T00:00:00.000Z', kind: 'k', actor: 'engine', prevHash: GENESIS_HASH };
    const h1 = hashRecord({ ...base, data: { a: 1, b: { x: 1, y: [1, 2] } } });
    const h2 = hashRecord({ data: { b: { y: [1, 2], x: 1 }, a: 1 }, prevHash: GENESIS_HASH, actor: 'engine', kind: 'k', ts: base.ts, seq: 1 });
    assert.equal(h1, h2);
    assert.notEqual(h1, hashRecord({ ...base, data: { a: 1, b: { x: 1, y: [2, 1] } } }), 'array order matters');
  });

  it('hashRecord ignores an existing hash field', () => {
    const [r] = build(1);
    assert.equal(hashRecord(r!), r!.hash);
    assert.equal(hashRecord({ ...r!, hash: 'f'.repeat(64) }), r!.hash);
  });

  it('a sound chain verifies; records given parsed work too', () => {
    const recs = build(20);
    assert.deepEqual(verifyChain(lines(recs)), { ok: true, checked: 20 });
    assert.deepEqual(verifyChain(recs.map((record, i) => ({ file: 'f', line: i + 1, record }))), { ok: true, checked: 20 });
    assert.deepEqual(verifyChain([]), { ok: true, checked: 0 });
  });

  it('tampered content is caught at that record', () => {
    const recs = build(10);
    const bad = { ...recs[4]!, data: { ...recs[4]!.data, passed: !recs[4]!.data['passed'] } };
    const r = verifyChain(lines([...recs.slice(0, 4), bad, ...recs.slice(5)]));
    assert.equal(r.ok, false);
    assert.equal(r.checked, 4);
    assert.deepEqual({ ...r.firstBroken, reason: undefined }, { file: 'audit-2025-01-01.jsonl', line: 5, seq: 5, reason: undefined });
    assert.match(r.firstBroken!.reason, /^tampered: /);
  });

  it('a removed, reordered or inserted record is a broken link', () => {
    const recs = build(10);
    const removed = verifyChain(lines([...recs.slice(0, 3), ...recs.slice(4)]));
    assert.deepEqual([removed.firstBroken?.line, removed.firstBroken?.seq], [4, 5]);
    assert.match(removed.firstBroken!.reason, /^broken link: /);

    const swapped = [...recs];
    [swapped[6], swapped[7]] = [swapped[7]!, swapped[6]!];
    const s = verifyChain(lines(swapped));
    assert.deepEqual([s.firstBroken?.line, s.firstBroken?.seq], [7, 8]);
    assert.match(s.firstBroken!.reason, /^broken link: /);

    const firstGone = verifyChain(lines(recs.slice(1)));
    assert.deepEqual([firstGone.firstBroken?.line, firstGone.firstBroken?.seq], [1, 2]);
    assert.match(firstGone.firstBroken!.reason, /^broken link: .*genesis/);
  });

  it('a seq that is not previous + 1 (with a recomputed hash) is a sequence break', () => {
    const recs = build(3);
    const forged = chainRecord(recs[1]!, { ts: recs[2]!.ts, kind: 'x', actor: 'engine', data: {} });
    const renumbered = { ...forged, seq: 7 };
    renumbered.hash = hashRecord(renumbered);
    const r = verifyChain(lines([recs[0], recs[1], renumbered]));
    assert.deepEqual([r.firstBroken?.line, r.firstBroken?.seq], [3, 7]);
    assert.match(r.firstBroken!.reason, /^sequence: expected seq 3, found 7/);
  });

  it('unparsable and malformed lines', () => {
    const recs = build(3);
    const u = verifyChain(lines([recs[0], '{"seq":2,"ts"', recs[2]]));
    assert.deepEqual(u.firstBroken, { file: 'audit-2025-01-01.jsonl', line: 2, seq: null, reason: 'unparsable: the line is not valid JSON' });
    const m = verifyChain(lines([recs[0], JSON.stringify({ ...recs[1], extra: 1 })]));
    assert.deepEqual([m.firstBroken?.line, m.firstBroken?.seq, m.firstBroken?.reason], [2, 2, 'malformed: unexpected field "extra"']);
  });

  it('fromSeq verifies from there on but still checks the link to the record before', () => {
    const recs = build(10);
    const tampered = recs.map((r) => ({ ...r }));
    tampered[2] = { ...tampered[2]!, actor: 'user:mallory' }; // seq 3
    assert.deepEqual(verifyChain(lines(tampered), { fromSeq: 5 }), { ok: true, checked: 6 });
    const r = verifyChain(lines(tampered), { fromSeq: 4 });
    assert.equal(r.ok, false);
    assert.equal(r.firstBroken?.seq, 3, 'the anchor record (fromSeq - 1) is checked');
    // The anchor itself missing.
    const gap = verifyChain(lines([...recs.slice(0, 3), ...recs.slice(4)]), { fromSeq: 5 });
    assert.deepEqual([gap.firstBroken?.seq, gap.firstBroken?.reason], [5, 'sequence: expected seq 4, found 5']);
    assert.deepEqual(verifyChain(lines(recs), { fromSeq: 50 }), { ok: true, checked: 0 });
  });

  it('ChainVerifier stops at the first break', () => {
    const recs = build(4);
    const v = new ChainVerifier();
    assert.equal(v.push({ file: 'f', line: 1, text: JSON.stringify(recs[0]) }), true);
    assert.equal(v.push({ file: 'f', line: 2, text: 'nope' }), false);
    assert.equal(v.push({ file: 'f', line: 3, text: JSON.stringify(recs[1]) }), false);
    assert.equal(v.done, true);
    assert.equal(v.result().firstBroken?.line, 2);
  });

  it('canonicalData gives the canonical text and its parsed form, as canonicalize + JSON.parse, on odd data', () => {
    const odd: Array<Record<string, unknown>> = [
      { b: 1, a: { d: [3, undefined, () => 1, NaN, -0, Infinity], c: 'x"\\\n\ud800' }, u: undefined, f: () => 2, s: Symbol('s') },
      { when: new Date(0), custom: { toJSON: () => ({ z: 1, y: [new Date(1)] }) }, nested: [[{ b: 2, a: 1 }]] },
      { '10': 'ten', '9': 'nine', a: 1, '01': 'not an index' }, // index-like keys: enumerated first by JavaScript
      { deep: { '2': { '1': true } } },
      JSON.parse('{"__proto__":{"x":1},"b":2}') as Record<string, unknown>,
      { gates: Array.from({ length: 21 }, (_, i) => ({ gate: `g${i}`, number: i + 1, category: 'quality', threshold: i % 3 === 0 ? null : 0.8, status: 'pass', value: i / 7, reason: 'ok' })) },
      {},
    ];
    for (const data of odd) {
      const text = canonicalize(data);
      const got = canonicalData(data);
      assert.equal(got.canon, text);
      assert.deepStrictEqual(got.data, JSON.parse(text));
      assert.deepEqual(Object.keys(got.data), Object.keys(JSON.parse(text) as object), 'same key order as the parsed canonical text');
    }
    assert.throws(() => canonicalData({ n: 1n }), TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.throws(() => canonicalData(cyclic), TypeError);
  });
});
