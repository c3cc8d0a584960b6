/**
 * In-memory fakes of the engine ports for the ACMF tests. Like the real store, a mutation changes
 * the in-memory view at once and returns a promise for its "durability" (the next microtask).
 * Records are cloned on write, as JSON persistence would.
 */
import { EngineError } from '../../server/src/engine/errors';
import type { AuditEntry, AuditRecord, AuditTrail, AuditVerification, Clock, Identified, Repository } from '../../server/src/engine/ports';

export class MemoryRepository<T extends Identified> implements Repository<T> {
  readonly records = new Map<string, T>();
  /** Number of mutations that reached "disk". */
  writes = 0;

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  list(filter?: (record: T) => boolean): T[] {
    const all = [...this.records.values()];
    return filter ? all.filter(filter) : all;
  }

  count(): number {
    return this.records.size;
  }

  put(record: T): Promise<void> {
    this.records.set(record.id, clone(record));
    return this.flush();
  }

  update(id: string, patch: Partial<T>): Promise<T> {
    const existing = this.records.get(id);
    if (!existing) return Promise.reject(new EngineError('ERR_NOT_FOUND', `${id} not found`));
    const next = clone({ ...existing, ...patch });
    this.records.set(id, next);
    return this.flush().then(() => next);
  }

  delete(id: string): Promise<boolean> {
    const had = this.records.delete(id);
    return this.flush().then(() => had);
  }

  private async flush(): Promise<void> {
    await Promise.resolve();
    this.writes++;
  }
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export class MemoryAuditTrail implements AuditTrail {
  readonly records: AuditRecord[] = [];

  constructor(private readonly clock: Clock) {}

  async append(entry: AuditEntry): Promise<AuditRecord> {
    const seq = this.records.length + 1;
    const record: AuditRecord = {
      seq,
      ts: new Date(this.clock.now()).toISOString(),
      ...entry,
      prevHash: seq === 1 ? '0'.repeat(64) : `h${seq - 1}`,
      hash: `h${seq}`,
    };
    this.records.push(record);
    return record;
  }

  async query(filter: { executionId?: string; agentId?: string; kind?: string; limit?: number } = {}): Promise<AuditRecord[]> {
    const hits = this.records.filter(
      (r) =>
        (filter.executionId === undefined || r.executionId === filter.executionId) &&
        (filter.agentId === undefined || r.agentId === filter.agentId) &&
        (filter.kind === undefined || r.kind === filter.kind),
    );
    // Like the real trail (jsonl-audit-trail.ts query): `limit` keeps the newest matching records, oldest first.
    return filter.limit === undefined ? hits : filter.limit === 0 ? [] : hits.slice(-filter.limit);
  }

  async verify(): Promise<AuditVerification> {
    return { ok: true, checked: this.records.length };
  }
}

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.parse('2025-06-02T12:00:00.000Z')) {}

  now(): number {
    return this.ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Sequential ids with a prefix. */
export function idGenerator(prefix = 'apr_'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}
