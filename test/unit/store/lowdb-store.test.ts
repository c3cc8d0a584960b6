import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Identified } from '../../../server/src/engine/ports';
import {
  AtomicJsonFileAdapter,
  CURRENT_SCHEMA_VERSION,
  MIGRATIONS,
  openStore,
  storeFilePath,
  type Migration,
  type Store,
  type StoreData,
} from '../../../server/src/store';

interface Task extends Identified {
  title: string;
  status: string;
  tags?: string[];
}

/** Wraps the real adapter: counts writes, keeps each write's snapshot, can hold a write open or fail it. */
class SpyAdapter extends AtomicJsonFileAdapter<StoreData> {
  writes: StoreData[] = [];
  failNext = 0;
  private gate: { promise: Promise<void>; release: () => void } | null = null;

  hold(): void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.gate = { promise, release };
  }

  release(): void {
    const gate = this.gate;
    this.gate = null;
    gate?.release();
  }

  override write(data: StoreData): Promise<void> {
    const snapshot = JSON.parse(JSON.stringify(data)) as StoreData; // synchronous, like the real adapter
    this.writes.push(snapshot);
    const gate = this.gate?.promise;
    const fail = this.failNext > 0;
    if (fail) this.failNext--;
    const real = fail ? undefined : super.write(data);
    return (async () => {
      if (gate) await gate;
      if (fail) throw Object.assign(new Error('disk full (simulated)'), { code: 'ENOSPC' });
      await real;
    })();
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const ids = (data: StoreData, coll = 'tasks'): string[] => Object.keys(data.collections[coll] ?? {}).sort();

describe('store: whole-file lowdb store (the baseline; a custom adapter opens it) and openStore', () => {
  let dir: string;
  let file: string;
  let store: Store | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-store-'));
    file = storeFilePath(dir);
  });

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function openSpied(extra: { durability?: 'group' | 'per-mutation' } = {}): Promise<{ store: Store; spy: SpyAdapter }> {
    const spy = new SpyAdapter(file);
    store = await openStore({ file, adapter: spy, ...extra });
    return { store, spy };
  }

  async function readFileData(): Promise<StoreData> {
    return JSON.parse(await readFile(file, 'utf8')) as StoreData;
  }

  it('exports schema version 1 and an empty migration list', () => {
    assert.equal(CURRENT_SCHEMA_VERSION, 1);
    assert.deepEqual([...MIGRATIONS], []);
  });

  it('starts empty at the current version when the file is missing, without writing', async () => {
    const { store: s, spy } = await openSpied();
    assert.equal(s.schemaVersion, CURRENT_SCHEMA_VERSION);
    assert.equal(s.collection<Task>('tasks').count(), 0);
    await s.flush();
    assert.equal(spy.writes.length, 0);
    assert.equal(existsSync(file), false);
  });

  it('coalesces N mutations made in the same tick into one file write', async () => {
    const { store: s, spy } = await openSpied();
    const tasks = s.collection<Task>('tasks');
    const other = s.collection<Identified & { v: number }>('other');
    const N = 100;
    const promises: Promise<unknown>[] = [];
    for (let i = 0; i < N; i++) promises.push(tasks.put({ id: `t${i}`, title: `task ${i}`, status: 'queued' }));
    promises.push(other.put({ id: 'o1', v: 1 }));
    promises.push(tasks.update('t0', { status: 'running' }));
    promises.push(tasks.delete('t1'));
    assert.equal(tasks.count(), N - 1, 'memory changes at once');
    assert.equal(tasks.get('t0')?.status, 'running');
    await Promise.all(promises);
    assert.equal(spy.writes.length, 1);
    assert.equal(s.stats().writes, 1);
    assert.equal(s.stats().maxBatch, N + 3);
    const onDisk = await readFileData();
    assert.equal(onDisk.schemaVersion, CURRENT_SCHEMA_VERSION);
    assert.equal(ids(onDisk).length, N - 1);
    assert.equal((onDisk.collections.tasks!.t0 as unknown as Task).status, 'running');
    assert.deepEqual(onDisk.collections.other, { o1: { id: 'o1', v: 1 } });
  });

  it('puts mutations made during an in-flight write into the next single write', async () => {
    const { store: s, spy } = await openSpied();
    const tasks = s.collection<Task>('tasks');
    spy.hold();
    let aDone = false;
    const a = tasks.put({ id: 'a', title: 'A', status: 'queued' }).then(() => (aDone = true));
    await tick();
    await tick();
    assert.equal(spy.writes.length, 1, 'first write in flight');
    let laterDone = 0;
    const later = [
      tasks.put({ id: 'b', title: 'B', status: 'queued' }),
      tasks.put({ id: 'c', title: 'C', status: 'queued' }),
    ].map((p) => p.then(() => laterDone++));
    await tick();
    const d = tasks.put({ id: 'd', title: 'D', status: 'queued' }).then(() => laterDone++);
    await tick();
    await tick();
    assert.equal(spy.writes.length, 1, 'never more than one write in flight');
    assert.equal(aDone, false);
    assert.equal(laterDone, 0);
    spy.release();
    await a;
    await Promise.all([...later, d]);
    assert.equal(spy.writes.length, 2, 'b, c and d went out together');
    assert.deepEqual(ids(spy.writes[0]!), ['a']);
    assert.deepEqual(ids(spy.writes[1]!), ['a', 'b', 'c', 'd']);
    assert.deepEqual(ids(await readFileData()), ['a', 'b', 'c', 'd']);
  });

  it('get, list, count, update and delete', async () => {
    const { store: s } = await openSpied();
    const tasks = s.collection<Task>('tasks');
    assert.equal(s.collection<Task>('tasks'), tasks, 'same repository per name');
    await tasks.put({ id: 'x', title: 'X', status: 'queued', tags: ['a'] });
    await tasks.put({ id: 'y', title: 'Y', status: 'done' });
    assert.deepEqual(tasks.get('x'), { id: 'x', title: 'X', status: 'queued', tags: ['a'] });
    assert.equal(tasks.get('nope'), undefined);
    assert.equal(tasks.get('toString'), undefined, 'no prototype keys');
    assert.equal(tasks.count(), 2);
    assert.deepEqual(tasks.list().map((t) => t.id).sort(), ['x', 'y']);
    assert.deepEqual(tasks.list((t) => t.status === 'done').map((t) => t.id), ['y']);

    const updated = await tasks.update('x', { status: 'running', id: 'ignored' } as Partial<Task>);
    assert.deepEqual(updated, { id: 'x', title: 'X', status: 'running', tags: ['a'] });
    assert.equal(tasks.get('x'), updated);

    await tasks.put({ id: 'x', title: 'X2', status: 'queued' }); // replace
    assert.deepEqual(tasks.get('x'), { id: 'x', title: 'X2', status: 'queued' });
    assert.equal(tasks.count(), 2);

    assert.equal(await tasks.delete('y'), true);
    assert.equal(await tasks.delete('y'), false);
    assert.equal(tasks.count(), 1);
    assert.deepEqual(s.collectionNames(), ['tasks']);
    await s.close();

    const reopened = await openStore({ file });
    store = reopened;
    assert.deepEqual(reopened.collection<Task>('tasks').list(), [{ id: 'x', title: 'X2', status: 'queued' }]);
  });

  it('stores the JSON form of records, decoupled from the caller object', async () => {
    const { store: s } = await openSpied();
    const repo = s.collection<Identified & { at: unknown; gone?: unknown }>('r');
    const rec: { id: string; at: unknown; gone?: unknown } = { id: 'r1', at: new Date(0), gone: undefined };
    await repo.put(rec);
    rec.at = 'mutated';
    assert.deepEqual(repo.get('r1'), { id: 'r1', at: '1970-01-01T00:00:00.000Z' });
    await assert.rejects(repo.put({ id: 'big', at: 10n }), { code: 'ERR_VALIDATION' });
    await assert.rejects(repo.put({ id: '', at: 1 }), { code: 'ERR_VALIDATION' });
    assert.equal(repo.count(), 1);
  });

  it('rejects update of a missing id with ERR_NOT_FOUND', async () => {
    const { store: s, spy } = await openSpied();
    const tasks = s.collection<Task>('tasks');
    await assert.rejects(tasks.update('missing', { status: 'x' }), (err: unknown) => {
      assert.equal((err as { code?: string }).code, 'ERR_NOT_FOUND');
      assert.equal((err as Error).name, 'EngineError');
      return true;
    });
    assert.equal(spy.writes.length, 0);
  });

  it('a failed write rejects the mutations it carried; the next write retries the whole state', async () => {
    const errors: unknown[] = [];
    const spy = new SpyAdapter(file);
    store = await openStore({ file, adapter: spy, onWriteError: (e) => errors.push(e) });
    const tasks = store.collection<Task>('tasks');
    spy.failNext = 1;
    const failed = [tasks.put({ id: 'a', title: 'A', status: 'q' }), tasks.put({ id: 'b', title: 'B', status: 'q' })];
    for (const p of failed) {
      await assert.rejects(p, (err: unknown) => (err as { code?: string }).code === 'ERR_STORE');
    }
    assert.equal(errors.length, 1);
    assert.equal(tasks.count(), 2, 'memory keeps the mutations');
    assert.equal(existsSync(file), false);
    await tasks.put({ id: 'c', title: 'C', status: 'q' });
    assert.deepEqual(ids(await readFileData()), ['a', 'b', 'c']);
    assert.equal(store.stats().failedWrites, 1);

    // flush() alone retries after a failure with no further mutation
    spy.failNext = 1;
    await assert.rejects(tasks.delete('c'), { code: 'ERR_STORE' });
    await store.flush();
    assert.deepEqual(ids(await readFileData()), ['a', 'b']);
  });

  it('an ignored mutation promise whose write fails is not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { store: s, spy } = await openSpied();
      spy.failNext = 1;
      void s.collection<Task>('tasks').put({ id: 'a', title: 'A', status: 'q' });
      for (let i = 0; i < 5; i++) await tick();
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('close flushes pending mutations, is idempotent and refuses later mutations', async () => {
    const { store: s, spy } = await openSpied();
    const tasks = s.collection<Task>('tasks');
    void tasks.put({ id: 'a', title: 'A', status: 'q' });
    void tasks.put({ id: 'b', title: 'B', status: 'q' });
    await s.close();
    assert.equal(s.closed, true);
    assert.equal(spy.writes.length, 1);
    assert.deepEqual(ids(await readFileData()), ['a', 'b']);
    await s.close();
    assert.equal(spy.writes.length, 1, 'second close writes nothing');
    await assert.rejects(tasks.put({ id: 'c', title: 'C', status: 'q' }), { code: 'ERR_STORE' });
    assert.equal(tasks.get('c'), undefined);
    assert.equal(tasks.get('a')?.title, 'A', 'reads still work after close');
  });

  it('close waits for an in-flight write and the mutations queued behind it', async () => {
    const { store: s, spy } = await openSpied();
    const tasks = s.collection<Task>('tasks');
    spy.hold();
    void tasks.put({ id: 'a', title: 'A', status: 'q' });
    await tick();
    void tasks.put({ id: 'b', title: 'B', status: 'q' });
    const closing = s.close();
    setTimeout(() => spy.release(), 20);
    await closing;
    assert.equal(spy.writes.length, 2);
    assert.deepEqual(ids(await readFileData()), ['a', 'b']);
  });

  it('per-mutation durability writes once per mutation, in order', async () => {
    const { store: s, spy } = await openSpied({ durability: 'per-mutation' });
    const tasks = s.collection<Task>('tasks');
    await Promise.all([0, 1, 2, 3, 4].map((i) => tasks.put({ id: `t${i}`, title: 'T', status: 'q' })));
    assert.equal(spy.writes.length, 5);
    assert.equal(s.durability, 'per-mutation');
    await s.close();
    assert.equal(spy.writes.length, 5);
    assert.equal(ids(await readFileData()).length, 5);
  });

  it('writes atomically: compact JSON, no temp file left, stale temp removed on open', async () => {
    store = await openStore({ file, durability: 'whole-file' });
    await store.collection<Task>('tasks').put({ id: 'a', title: 'A', status: 'q' });
    await store.close();
    const text = await readFile(file, 'utf8');
    assert.equal(text, '{"schemaVersion":1,"collections":{"tasks":{"a":{"id":"a","title":"A","status":"q"}}}}');
    assert.equal(existsSync(`${file}.tmp`), false);

    await writeFile(`${file}.tmp`, '{"schemaVersion":1,"coll'); // as if killed mid-write
    store = await openStore({ file });
    assert.equal(existsSync(`${file}.tmp`), false);
    assert.equal(store.collection<Task>('tasks').get('a')?.title, 'A');
  });

  it('migrates an older file step by step and persists the new version', async () => {
    await writeFile(file, JSON.stringify({ schemaVersion: 1, collections: { tasks: { a: { id: 'a', name: 'A' } } } }));
    const calls: number[] = [];
    const migrations: Migration[] = [
      {
        version: 3,
        migrate: (d) => {
          calls.push(3);
          for (const t of Object.values(d.collections.tasks ?? {})) t.priority = 'normal';
          return d;
        },
      },
      {
        version: 2,
        migrate: (d) => {
          calls.push(2);
          for (const t of Object.values(d.collections.tasks ?? {})) {
            t.title = t.name;
            delete t.name;
          }
          return d;
        },
      },
    ];
    store = await openStore({ file, migrations, schemaVersion: 3 });
    assert.deepEqual(calls, [2, 3]);
    assert.equal(store.schemaVersion, 3);
    assert.deepEqual(store.collection('tasks').get('a'), { id: 'a', title: 'A', priority: 'normal' });
    const onDisk = await readFileData();
    assert.equal(onDisk.schemaVersion, 3);
    assert.deepEqual(onDisk.collections.tasks, { a: { id: 'a', title: 'A', priority: 'normal' } });
    const backup = JSON.parse(await readFile(`${file}.v1.bak`, 'utf8')) as StoreData;
    assert.equal(backup.schemaVersion, 1);
    await store.close();

    calls.length = 0;
    store = await openStore({ file, migrations, schemaVersion: 3 });
    assert.deepEqual(calls, [], 'an up-to-date file is not migrated again');
  });

  it('refuses a file with a missing migration step', async () => {
    await writeFile(file, JSON.stringify({ schemaVersion: 1, collections: {} }));
    await assert.rejects(openStore({ file, migrations: [], schemaVersion: 2 }), (err: unknown) => {
      assert.equal((err as { code?: string }).code, 'ERR_STORE');
      assert.match((err as Error).message, /No migration to schema version 2/);
      return true;
    });
  });

  it('refuses a file written by a newer version', async () => {
    const original = JSON.stringify({ schemaVersion: CURRENT_SCHEMA_VERSION + 1, collections: {} });
    await writeFile(file, original);
    await assert.rejects(openStore({ file }), (err: unknown) => {
      assert.equal((err as { code?: string }).code, 'ERR_STORE');
      assert.match((err as Error).message, /newer than this version of Cadre supports/);
      assert.ok((err as Error).message.includes(file));
      return true;
    });
    assert.equal(await readFile(file, 'utf8'), original, 'left untouched');
  });

  it('refuses a corrupt file with a message naming it, and leaves it untouched', async () => {
    for (const content of ['{"schemaVersion":1,"collections":{"tasks":{', '', '[1,2]', '{"schemaVersion":"1","collections":{}}',
      '{"schemaVersion":1,"collections":{"tasks":[]}}']) {
      await writeFile(file, content);
      await assert.rejects(openStore({ file }), (err: unknown) => {
        assert.equal((err as { code?: string }).code, 'ERR_STORE', content);
        assert.ok((err as Error).message.includes(file), (err as Error).message);
        assert.match((err as Error).message, /corrupt/);
        return true;
      });
      assert.equal(await readFile(file, 'utf8'), content);
    }
  });

  it('keeps ids such as __proto__ as plain records', async () => {
    store = await openStore({ file });
    const repo = store.collection<Identified & { v: number }>('odd');
    await repo.put({ id: '__proto__', v: 1 });
    await repo.put({ id: 'constructor', v: 2 });
    assert.equal(repo.count(), 2);
    await store.close();
    store = await openStore({ file });
    const again = store.collection<Identified & { v: number }>('odd');
    assert.deepEqual(again.get('__proto__'), { id: '__proto__', v: 1 });
    assert.equal(again.count(), 2);
  });
});
