/**
 * One owner per data directory. The owner holds `<dataDir>/cadre.lock` ({pid, port, ...}); another
 * process that finds a live owner attaches to it over HTTP instead of opening the store. A lock left
 * by a dead process is recovered, under a short-lived mkdir mutex so two recoverers cannot both win.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from '../engine/errors';

export interface LockInfo {
  pid: number;
  port: number | null;
  startedAt: string;
  version: string;
}

export type LockOutcome = { owner: true; lock: OwnerLock } | { owner: false; info: LockInfo };

const RECOVERY_MUTEX_STALE_MS = 10_000;
const UNREADABLE_LOCK_STALE_MS = 2_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readLock(file: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as LockInfo;
    return typeof info.pid === 'number' ? info : null;
  } catch {
    return null;
  }
}

export class OwnerLock {
  private released = false;

  private constructor(readonly file: string, private info: LockInfo) {}

  /** Tries to become the owner of `dataDir`; returns the live owner's info otherwise. */
  static acquire(dataDir: string, version: string): LockOutcome {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, 'cadre.lock');
    const info: LockInfo = { pid: process.pid, port: null, startedAt: new Date().toISOString(), version };
    for (let attempt = 0; attempt < 40; attempt++) {
      try {
        const fd = openSync(file, 'wx');
        try {
          writeSync(fd, JSON.stringify(info));
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        return { owner: true, lock: new OwnerLock(file, info) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new EngineError('ERR_DATA_DIR_LOCKED', `cannot create ${file}: ${(err as Error).message}`, { cause: err });
      }
      const current = readLock(file);
      if (current && current.pid !== process.pid && isProcessAlive(current.pid)) return { owner: false, info: current };
      recoverStale(file, current);
      if (current === null) sleepSync(100); // a lock being written right now: give its writer a moment
    }
    throw new EngineError('ERR_DATA_DIR_LOCKED', `could not take ${file}: it keeps changing hands`);
  }

  /** Records the port once the HTTP server listens, so attachers can find it. */
  setPort(port: number): void {
    this.info = { ...this.info, port };
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, JSON.stringify(this.info));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const current = readLock(this.file);
    if (current?.pid === process.pid) {
      try {
        unlinkSync(this.file);
      } catch {
        // already gone
      }
    }
  }
}

/** Removes a dead owner's lock, serialised by a mkdir mutex; a racing recoverer simply retries. */
function recoverStale(file: string, seen: LockInfo | null): void {
  const mutex = `${file}.recover`;
  try {
    mkdirSync(mutex);
  } catch {
    try {
      if (Date.now() - statSync(mutex).mtimeMs > RECOVERY_MUTEX_STALE_MS) rmdirSync(mutex);
    } catch {
      // someone else removed it
    }
    return;
  }
  try {
    const again = readLock(file);
    const unchanged = (again === null && seen === null) || (again !== null && seen !== null && again.pid === seen.pid && again.startedAt === seen.startedAt);
    // An unreadable lock may be one being written this instant: only an old one is stale.
    const stale = again === null ? ageMs(file) > UNREADABLE_LOCK_STALE_MS : !isProcessAlive(again.pid);
    if (unchanged && stale) {
      try {
        unlinkSync(file);
      } catch {
        // gone already
      }
    }
  } finally {
    rmdirSync(mutex);
  }
}
