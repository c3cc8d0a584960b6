/**
 * Execution event logs as JSON Lines, one file per execution under `<dataDir>/events/`. Appends are
 * written together up to WRITE_DELAY_MS (20 ms) later; a crash loses no event that was written, and a torn last line (a write
 * cut short) is skipped on read.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import type { EngineEvent } from '../../../protocol/events';
import type { EventLog } from '../engine/executions/event-log';

const SAFE_ID = /^[a-z]{2,8}_[0-9a-f]{8,64}$/;
/** Executions whose events stay in memory for replays (the most recently started). */
export const MEMORY_EXECUTIONS = 128;
export const MEMORY_EVENTS_PER_EXECUTION = 20_000;
/** Bytes of the file read per page of a paged replay (and events per page from memory). */
const PAGE_BYTES = 64 * 1024;
const PAGE_EVENTS = 256;
/**
 * Files kept open between writes (the executions written most recently): a turn's events of an
 * execution are one `write` call, where `appendFile` opened, wrote and closed the file, three
 * thread-pool round trips of 30-110 µs of CPU each on the 2 shared cores this was measured on (a step
 * emits ~17 events over a few turns). Writes stay asynchronous: a synchronous one blocked the event loop
 * for up to 144 ms under disk pressure. Files idle for {@link IDLE_CLOSE_MS} are closed, so an ended
 * execution's file is not held open for long (retention deletes it days later).
 */
const MAX_OPEN_FILES = 64;
/**
 * How long appended events wait for their write (see append), and how many may wait. 20 ms, not 5: on one
 * run a step takes a few ms, and a write per step or two was a few % of its wall time (engine-cpu.ts
 * --workflows --skill-ms 1 --lanes 1, same process: 20 vs 5 ms 0.87x-1.04x, decisions.md); readers never wait for it
 * (they see pending events), a kill loses at most that much of the stream's history, never a record
 * (the store is the truth: a replay of an ended execution ends on its status, http/sse.ts).
 */
const WRITE_DELAY_MS = 20;
const WRITE_EARLY_EVENTS = 512;
const IDLE_CLOSE_MS = 10_000;

export class JsonlEventLog implements EventLog {
  private readonly pending = new Map<string, EngineEvent[]>();
  /** Events handed to a write that has not finished: readers still see them. */
  private readonly writingNow = new Map<string, EngineEvent[]>();
  private readonly lastSeqs = new Map<string, number>();
  /**
   * The whole event list of executions that started in this process (their seq 1 was appended here),
   * so that SSE clients connecting to a running execution replay from memory, not from the file.
   * Bounded: the oldest executions and the longest logs fall back to the file.
   */
  private readonly complete = new Map<string, EngineEvent[]>();
  private scheduled = false;
  /** Events appended since the last write was scheduled. */
  private pendingEvents = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  /** Open append handles by execution, least recently written first, with the time of their last write. */
  private readonly handles = new Map<string, { fh: FileHandle; usedAt: number }>();
  private idleTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly dir: string, private readonly onError: (err: Error) => void) {}

  static async open(dir: string, onError: (err: Error) => void = () => {}): Promise<JsonlEventLog> {
    await mkdir(dir, { recursive: true });
    return new JsonlEventLog(dir, onError);
  }

  private file(executionId: string): string {
    if (!SAFE_ID.test(executionId)) throw new Error(`not an execution id: ${executionId}`);
    return path.join(this.dir, `${executionId}.jsonl`);
  }

  append(event: EngineEvent): void {
    this.remember(event);
    let list = this.pending.get(event.execution_id);
    if (!list) this.pending.set(event.execution_id, (list = []));
    list.push(event);
    this.lastSeqs.set(event.execution_id, event.seq);
    this.pendingEvents++;
    if (!this.scheduled) {
      this.scheduled = true;
      // WRITE_DELAY_MS later (at once past WRITE_EARLY_EVENTS): a step emits ~18 events over several
      // turns, and its end also makes its checkpoint, whose durable write the store starts in that turn;
      // written a few ms later the events of a step or more go out in one write, which no longer runs
      // ahead of the checkpoint's (readers see pending events; flush writes them at once).
      this.timer = setTimeout(() => this.writeNow(), WRITE_DELAY_MS);
    } else if (this.pendingEvents >= WRITE_EARLY_EVENTS && this.timer) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.writeNow(), 0);
    }
  }

  private remember(event: EngineEvent): void {
    const id = event.execution_id;
    if (event.seq === 1) {
      this.complete.delete(id);
      this.complete.set(id, [event]);
      if (this.complete.size > MEMORY_EXECUTIONS) this.complete.delete(this.complete.keys().next().value!);
      return;
    }
    const list = this.complete.get(id);
    if (!list) return;
    if (list.length >= MEMORY_EVENTS_PER_EXECUTION || list[list.length - 1]!.seq !== event.seq - 1) this.complete.delete(id);
    else list.push(event);
  }

  private writeNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.scheduled = false;
    this.pendingEvents = 0;
    this.writing = this.writing.then(() => this.writePending());
  }

  /** Writes the pending events, one append per execution through its kept-open file (see MAX_OPEN_FILES). */
  private async writePending(): Promise<void> {
    const batch = [...this.pending];
    this.pending.clear();
    for (const [id, events] of batch) this.writingNow.set(id, [...(this.writingNow.get(id) ?? []), ...events]);
    await Promise.all(
      batch.map(async ([id, events]) => {
        try {
          let text = '';
          for (const e of events) text += `${JSON.stringify(e)}\n`;
          await this.appendTo(id, Buffer.from(text, 'utf8'));
        } catch (err) {
          this.onError(err as Error);
        } finally {
          this.writingNow.delete(id);
        }
      }),
    );
    // Beyond the bound, the least recently written files are closed (writes are serialised: none is in use).
    while (this.handles.size > MAX_OPEN_FILES) {
      const [id, h] = this.handles.entries().next().value!;
      this.handles.delete(id);
      await h.fh.close().catch(() => undefined);
    }
    this.armIdleClose();
  }

  /** Appends to the execution's file through its kept-open handle (opened in append mode when needed). */
  private async appendTo(id: string, buf: Buffer): Promise<void> {
    let h = this.handles.get(id);
    if (h) this.handles.delete(id);
    else h = { fh: await open(this.file(id), 'a'), usedAt: 0 };
    try {
      for (let off = 0; off < buf.length;) off += (await h.fh.write(buf, off, buf.length - off, null)).bytesWritten;
    } catch (err) {
      // A handle that failed is not trusted again: the next write reopens the file.
      await h.fh.close().catch(() => undefined);
      throw err;
    }
    h.usedAt = Date.now();
    this.handles.set(id, h); // most recently written last
  }

  private armIdleClose(): void {
    if (this.handles.size === 0 || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.writing = this.writing.then(() => this.closeIdle(Date.now() - IDLE_CLOSE_MS));
    }, IDLE_CLOSE_MS);
    this.idleTimer.unref();
  }

  /** Closes the files not written since `before` (ms); all of them with Infinity. */
  private async closeIdle(before: number): Promise<void> {
    for (const [id, h] of [...this.handles]) {
      if (h.usedAt >= before) continue;
      this.handles.delete(id);
      await h.fh.close().catch(() => undefined);
    }
    this.armIdleClose();
  }

  async read(executionId: string, afterSeq: number): Promise<EngineEvent[]> {
    const known = this.complete.get(executionId);
    if (known) return known.filter((e) => e.seq > afterSeq);
    // Take the events not yet in the file before reading it: an event that reaches the file meanwhile
    // is then in one of the two, never in neither (writes keep their order, so the file is a prefix).
    const buffered = [...(this.writingNow.get(executionId) ?? []), ...(this.pending.get(executionId) ?? [])];
    let text = '';
    try {
      text = await readFile(this.file(executionId), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const bySeq = new Map<number, EngineEvent>();
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const e = JSON.parse(line) as EngineEvent;
        if (e.seq > afterSeq) bySeq.set(e.seq, e);
      } catch {
        // a torn last line from a crash: never an event anyone received in full
      }
    }
    for (const e of buffered) if (e.seq > afterSeq && !bySeq.has(e.seq)) bySeq.set(e.seq, e);
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }

  /**
   * A paged replay: from memory in slices for executions of this process, else the file streamed
   * 64 KB at a time (the stream reads the next chunk only when the consumer asks for the next page),
   * then the events not yet written. Seqs only increase; a torn last line is skipped.
   */
  async *pages(executionId: string, afterSeq: number): AsyncGenerator<EngineEvent[]> {
    const known = this.complete.get(executionId);
    if (known) {
      let i = 0;
      while (i < known.length && known[i]!.seq <= afterSeq) i++;
      // The list may grow while it is read: every event appended meanwhile is taken too.
      for (; i < known.length; i += PAGE_EVENTS) yield known.slice(i, i + PAGE_EVENTS);
      return;
    }
    const buffered = [...(this.writingNow.get(executionId) ?? []), ...(this.pending.get(executionId) ?? [])];
    let last = afterSeq;
    const stream = createReadStream(this.file(executionId), { encoding: 'utf8', highWaterMark: PAGE_BYTES });
    let rest = '';
    try {
      for await (const chunk of stream as AsyncIterable<string>) {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop()!;
        const page: EngineEvent[] = [];
        for (const line of lines) {
          if (!line) continue;
          try {
            const e = JSON.parse(line) as EngineEvent;
            if (e.seq > last) {
              page.push(e);
              last = e.seq;
            }
          } catch {
            // a torn line from a crash: never an event anyone received in full
          }
        }
        if (page.length > 0) yield page;
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    } finally {
      stream.destroy();
    }
    const tail = buffered.filter((e) => e.seq > last).sort((a, b) => a.seq - b.seq);
    if (tail.length > 0) yield tail;
  }

  /**
   * The last seq of an execution not seen in this process: read from the end of its file (the last
   * complete line of the final 64 KB, further back only if none is there), so resuming executions at
   * start-up costs the same whatever the length of their logs.
   */
  async lastSeq(executionId: string): Promise<number> {
    const known = this.lastSeqs.get(executionId);
    if (known !== undefined) return known;
    const buffered = [...(this.writingNow.get(executionId) ?? []), ...(this.pending.get(executionId) ?? [])];
    let fromFile = 0;
    let fh: FileHandle | undefined;
    try {
      fh = await open(this.file(executionId), 'r');
      const size = (await fh.stat()).size;
      for (let window = PAGE_BYTES; ; window *= 4) {
        const start = Math.max(0, size - window);
        const buf = Buffer.alloc(size - start);
        await fh.read(buf, 0, buf.length, start);
        const lines = buf.toString('utf8').split('\n');
        if (start > 0) lines.shift(); // the first line of the window may be cut
        for (let i = lines.length - 1; i >= 0 && fromFile === 0; i--) {
          try {
            const seq = (JSON.parse(lines[i]!) as EngineEvent).seq;
            if (typeof seq === 'number') fromFile = seq;
          } catch {
            // a torn last line, or the empty string after the final newline
          }
        }
        if (fromFile > 0 || start === 0) break;
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    } finally {
      await fh?.close();
    }
    return Math.max(fromFile, ...buffered.map((e) => e.seq), 0);
  }

  /** Writes what is pending, then closes the kept-open files (the host flushes at shutdown). */
  async flush(): Promise<void> {
    if (this.pending.size > 0) this.writeNow();
    this.writing = this.writing.then(() => this.closeIdle(Infinity));
    await this.writing;
    if (this.idleTimer && this.handles.size === 0) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
  }
}
