/**
 * The physical floor of a durable step on this disk: what one small append + fsync costs, measured in
 * the same run as the bench that prints it (a step that is durable cannot be acknowledged faster than
 * one of these, however little the engine does around it).
 */
import { open } from 'node:fs/promises';
import * as path from 'node:path';

export interface FsyncFloor {
  /** Median ms of one append (≈ one audit batch) + fsync. */
  medianMs: number;
  p90Ms: number;
  samples: number;
}

export async function measureFsyncFloor(dir: string, samples = 100): Promise<FsyncFloor> {
  const fh = await open(path.join(dir, 'fsync-floor.bin'), 'a');
  const line = Buffer.alloc(2048, 0x61);
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const t = process.hrtime.bigint();
      await fh.appendFile(line);
      await fh.sync();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  } finally {
    await fh.close();
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)]!, p90Ms: times[Math.floor(times.length * 0.9)]!, samples };
}

export function describeFloor(f: FsyncFloor): string {
  return `one append+fsync on this disk: median ${f.medianMs.toFixed(2)} ms, p90 ${f.p90Ms.toFixed(2)} ms (${f.samples} samples, same run)`;
}
