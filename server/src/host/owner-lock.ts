/**
 * One owner per data directory. The owner holds `<dataDir>/cadre.lock` ({pid, port, token, ...},
 * readable by its user only); another process that finds a live owner attaches to it over HTTP
 * instead of opening the store.
 *
 * "Live owner" is proven, not assumed: the lock carries a random token, and the process on the
 * lock's port must answer `GET /v1/health` carrying `X-Cadre-Lock-Nonce: <random nonce>` with
 * `X-Cadre-Lock-Proof: HMAC-SHA256(token, nonce)`. The token never travels, so a program that merely
 * answers `{"service":"cadre"}` on that port gets no attachment and no API key. A lock is stale when
 * its pid is dead, when the pid names another process than the writer (a reused pid: told by the
 * process start time recorded in the lock, on Linux), when the port answers without the proof, or when the port refuses connections
 * (an owner writes its port only once it listens). A stale lock is removed under a short-lived
 * mkdir mutex, so two recoverers cannot both win.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync, fsyncSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { EngineError } from '../engine/errors';

export interface LockInfo {
  pid: number;
  port: number | null;
  startedAt: string;
  version: string;
  /** 32 random bytes (hex): proves ownership through an HMAC, never sent. Absent in locks of older versions. */
  token?: string;
  /** When the writing process started (ms, Linux /proc): with `pid`, names the process, so a reused pid is told apart. */
  procStart?: number;
}

export type LockOutcome = { owner: true; lock: OwnerLock } | { owner: false; info: LockInfo };

export const LOCK_FILE = 'cadre.lock';
export const LOCK_NONCE_HEADER = 'x-cadre-lock-nonce';
export const LOCK_PROOF_HEADER = 'x-cadre-lock-proof';

const RECOVERY_MUTEX_STALE_MS = 10_000;
const UNREADABLE_LOCK_STALE_MS = 2_000;
/** How long a live pid that has not proven the token (yet) is waited for before giving up. */
export const OWNER_PROOF_WAIT_MS = 15_000;
/** Refused connections on the lock's port in a row (100 ms apart) that make the lock stale. */
const REFUSALS_FOR_STALE = 5;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
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

/** HMAC-SHA256(token, nonce), hex: what the owner answers for a nonce. */
export function lockProof(token: string, nonce: string): string {
  return createHmac('sha256', token).update(nonce).digest('hex');
}

function proofMatches(token: string, nonce: string, presented: string | undefined): boolean {
  if (typeof presented !== 'string') return false;
  const want = Buffer.from(lockProof(token, nonce), 'utf8');
  const got = Buffer.from(presented, 'utf8');
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * When the process `pid` started (ms since the epoch), from /proc on Linux; null elsewhere or when
 * unknown. A process that started after the lock was written cannot be the process that wrote it.
 */
export function processStartMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime, clock ticks since boot) counts from after the ")" that ends the command name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    if (!Number.isFinite(ticks) || !btime) return null;
    return Number(btime) * 1000 + (ticks / 100) * 1000; // USER_HZ is 100 on every Linux ABI Node supports
  } catch {
    return null;
  }
}

export type ProofAnswer = 'proven' | 'unproven' | 'refused' | 'no-answer';

/** Asks the process on `port` to prove `token` (a fresh nonce each time). */
export function probeOwner(port: number, token: string, timeoutMs = 1000): Promise<ProofAnswer> {
  const nonce = randomBytes(16).toString('hex');
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/health', method: 'GET', timeout: timeoutMs, headers: { [LOCK_NONCE_HEADER]: nonce } }, (res) => {
      const presented = res.headers[LOCK_PROOF_HEADER];
      res.resume();
      resolve(proofMatches(token, nonce, typeof presented === 'string' ? presented : undefined) ? 'proven' : 'unproven');
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : 'no-answer'));
    req.end();
  });
}

export type OwnerVerdict = 'proven' | 'stale' | 'wait';

/** One look at a lock: its owner proved the token, the lock is stale, or the owner may still be starting. */
export async function judgeLock(info: LockInfo, refusals: { n: number } = { n: 0 }): Promise<OwnerVerdict> {
  if (!isProcessAlive(info.pid)) return 'stale';
  const started = processStartMs(info.pid);
  const written = Date.parse(info.startedAt);
  // The pid now names another process than the writer (pid reuse): by its start time, when both are known
  // (1 s of slack: boot time and clock ticks are coarse), or because it started after the lock was written.
  if (started !== null && typeof info.procStart === 'number' && Math.abs(started - info.procStart) > 1_000) return 'stale';
  if (started !== null && Number.isFinite(written) && started > written + 2_000) return 'stale';
  if (!info.token) {
    throw new EngineError('ERR_DATA_DIR_LOCKED',
      `the lock ${LOCK_FILE} of pid ${info.pid} was written by an older Cadre that cannot prove it owns the data directory; stop that process, or delete the lock if no Cadre runs`);
  }
  if (!info.port) return 'wait';
  const answer = await probeOwner(info.port, info.token);
  if (answer === 'proven') return 'proven';
  if (answer === 'unproven') return 'stale';
  if (answer === 'refused') return ++refusals.n >= REFUSALS_FOR_STALE ? 'stale' : 'wait';
  refusals.n = 0;
  return 'wait';
}

export class OwnerLock {
  private released = false;

  private constructor(readonly file: string, private info: LockInfo) {}

  /**
   * Becomes the owner of `dataDir`, or returns the info of an owner that proved its token. A live
   * pid that does not prove ownership within `waitMs` (still starting, or hung) is reported as an
   * ERR_DATA_DIR_LOCKED that says what to do.
   */
  static async acquire(dataDir: string, version: string, waitMs: number = OWNER_PROOF_WAIT_MS): Promise<LockOutcome> {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, LOCK_FILE);
    const procStart = processStartMs(process.pid);
    const info: LockInfo = {
      pid: process.pid, port: null, startedAt: new Date().toISOString(), version, token: randomBytes(32).toString('hex'),
      ...(procStart !== null ? { procStart } : {}),
    };
    const deadline = Date.now() + waitMs;
    const refusals = { n: 0 };
    for (let attempt = 0; attempt < 1000; attempt++) {
      try {
        writeNew(file, info);
        return { owner: true, lock: new OwnerLock(file, info) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new EngineError('ERR_DATA_DIR_LOCKED', `cannot create ${file}: ${(err as Error).message}`, { cause: err });
      }
      const current = readLock(file);
      if (current === null) {
        // A lock being written this instant, or garbage: only an old unreadable one is removed.
        recoverStale(file, null, false);
        await sleep(100);
        continue;
      }
      const verdict = await judgeLock(current, refusals);
      if (verdict === 'proven') return { owner: false, info: current };
      if (verdict === 'stale') {
        refusals.n = 0;
        recoverStale(file, current, true);
        continue;
      }
      if (Date.now() > deadline) {
        throw new EngineError('ERR_DATA_DIR_LOCKED',
          `${dataDir} is locked by pid ${current.pid}, which has not proven it owns it (${current.port ? `no answer on port ${current.port}` : 'no port yet'}) within ${Math.round(waitMs / 1000)} s; ` +
          `if that process is not Cadre, delete ${file}`);
      }
      await sleep(100);
    }
    throw new EngineError('ERR_DATA_DIR_LOCKED', `could not take ${file}: it keeps changing hands`);
  }

  /** The answer to a health request's nonce: HMAC(token, nonce). */
  proof(nonce: string): string | null {
    return this.info.token ? lockProof(this.info.token, nonce) : null;
  }

  /** Records the port once the HTTP server listens, so attachers can find it. */
  setPort(port: number): void {
    this.info = { ...this.info, port };
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
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
    if (current?.pid === process.pid && current.token === this.info.token) {
      try {
        unlinkSync(this.file);
      } catch {
        // already gone
      }
    }
  }
}

/** Creates the lock file (fails with EEXIST when one exists), readable by this user only. */
function writeNew(file: string, info: LockInfo): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(info));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes a stale lock, serialised by a mkdir mutex; a racing recoverer simply retries. `judged`:
 * the caller found `seen` stale (token and pid); it is removed if it is still the same lock.
 */
function recoverStale(file: string, seen: LockInfo | null, judged: boolean): void {
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
    const unchanged = (again === null && seen === null) ||
      (again !== null && seen !== null && again.pid === seen.pid && again.startedAt === seen.startedAt && again.token === seen.token);
    // An unreadable lock may be one being written this instant: only an old one is stale.
    const stale = again === null ? ageMs(file) > UNREADABLE_LOCK_STALE_MS : judged || !isProcessAlive(again.pid);
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

/**
 * The owner of `dataDir` when it proves its lock's token now (for clients about to send it a key),
 * else null. Never waits for a starting owner.
 */
export async function provenOwner(dataDir: string): Promise<LockInfo | null> {
  const info = readLock(join(dataDir, LOCK_FILE));
  if (!info?.token || !info.port || !isProcessAlive(info.pid)) return null;
  return (await probeOwner(info.port, info.token)) === 'proven' ? info : null;
}
