/**
 * The scan loop of a secret-scan worker thread (see scan-pool.ts), and nothing else: bundled on its
 * own to dist/scan-worker.js so that a scan worker loads the scanner and its rules (well under 100 KB)
 * instead of the whole skills bundle. It answers batches only in a thread started with the scan
 * worker flag, so loading this file anywhere else does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { scanFile, type FileScanOutcome, type PortableScanOptions } from './scanner';

/** workerData key that marks a thread as a secret-scan worker. */
export const SCAN_WORKER_FLAG = 'cadreSecretScanWorker';

export interface BatchRequest { id: number; root: string; files: Array<{ file: string; size: number }>; options: PortableScanOptions }
export interface BatchReply { id: number; outcomes: FileScanOutcome[] }

if (!isMainThread && parentPort && (workerData as Record<string, unknown> | null)?.[SCAN_WORKER_FLAG] === true) {
  const port = parentPort;
  port.on('message', (req: BatchRequest) => {
    const outcomes = req.files.map((f) => scanFile(req.root, f.file, req.options, f.size));
    port.postMessage({ id: req.id, outcomes } satisfies BatchReply);
  });
}
