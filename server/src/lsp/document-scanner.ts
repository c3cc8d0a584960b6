/**
 * Scans open documents for diagnostics. Requests are debounced per document; due documents wait in
 * a queue and are scanned one per event-loop tick, so a burst of edits across many files never blocks
 * the server for more than one document's scan at a time.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Finding } from '../skills/findings/finding';
import type * as ReviewAnalysis from '../skills/review/analyze';
import { scanText } from '../skills/security/scanner';
import { toDiagnostic } from './diagnostics';

export const CHANGE_DEBOUNCE_MS = 300;

export interface DocumentScannerDeps {
  /** The open document, or undefined once it is closed. */
  get(uri: string): TextDocument | undefined;
  publish(uri: string, diagnostics: Diagnostic[], version?: number): void;
  /** The workspace folder of the document (multi-root: each document's own folder). */
  workspaceDir(uri: string): string | undefined;
  log(line: string): void;
  debounceMs?: number;
}

/** The scanner's `file` for a document: workspace-relative with forward slashes, else its base name. */
export function documentFile(uri: string, workspaceDir: string | undefined): string {
  let abs: string;
  try {
    abs = uri.startsWith('file:') ? fileURLToPath(uri) : decodeURIComponent(new URL(uri).pathname);
  } catch {
    abs = uri;
  }
  if (workspaceDir) {
    const rel = path.relative(workspaceDir, abs);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  }
  return path.basename(abs);
}

/** review-ai's analysis uses the TypeScript parser (3.5 MB): loaded on the first scan, not at server start. */
function reviewAnalysis(): typeof ReviewAnalysis {
  return require('../skills/review/analyze') as typeof ReviewAnalysis;
}

/** security-ai's secret rules and review-ai's checks on the document's current text (not the file on disk). */
export function scanDocument(doc: TextDocument, workspaceDir: string | undefined): Diagnostic[] {
  return documentFindings(doc.getText(), documentFile(doc.uri, workspaceDir)).map(toDiagnostic);
}

/** The findings of a document's text (`file` workspace-relative): what its diagnostics show. */
export function documentFindings(text: string, file: string): Finding[] {
  return [...scanText(text, file), ...reviewAnalysis().analyzeFile(file, text, null).findings];
}

export class DocumentScanner {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly queue = new Set<string>();
  private pumping = false;
  private disposed = false;

  constructor(private readonly deps: DocumentScannerDeps) {}

  /** Scan on the next tick (open, save). */
  now(uri: string): void {
    this.clearTimer(uri);
    this.enqueue(uri);
  }

  /** Scan once the document has been quiet for the debounce delay (typing). */
  debounced(uri: string): void {
    this.clearTimer(uri);
    const t = setTimeout(() => {
      this.timers.delete(uri);
      this.enqueue(uri);
    }, this.deps.debounceMs ?? CHANGE_DEBOUNCE_MS);
    t.unref();
    this.timers.set(uri, t);
  }

  /** The document closed: forget pending work and clear its diagnostics. */
  close(uri: string): void {
    this.clearTimer(uri);
    this.queue.delete(uri);
    this.deps.publish(uri, []);
  }

  dispose(): void {
    this.disposed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
  }

  /** Documents waiting for a scan (debounced or queued); for tests. */
  get pending(): number {
    return this.timers.size + this.queue.size;
  }

  private clearTimer(uri: string): void {
    const t = this.timers.get(uri);
    if (t) clearTimeout(t);
    this.timers.delete(uri);
  }

  private enqueue(uri: string): void {
    if (this.disposed) return;
    this.queue.add(uri);
    if (!this.pumping) {
      this.pumping = true;
      setImmediate(() => this.pump());
    }
  }

  private pump(): void {
    const next = this.queue.values().next();
    if (next.done || this.disposed) {
      this.pumping = false;
      return;
    }
    const uri = next.value;
    this.queue.delete(uri);
    const doc = this.deps.get(uri);
    if (doc) {
      try {
        this.deps.publish(uri, scanDocument(doc, this.deps.workspaceDir(uri)), doc.version);
      } catch (err) {
        this.deps.log(`Cadre could not scan ${uri}: ${(err as Error).message}`);
      }
    }
    if (this.queue.size > 0) setImmediate(() => this.pump());
    else this.pumping = false;
  }
}
