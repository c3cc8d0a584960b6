/**
 * What every command shares: the global options, the connection to a server (or the embedded
 * engine), printing data as text or JSON, help examples, and following an execution to its end with
 * the documented exit code.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { CliError } from './cli-error';
import { connect, type GlobalOptions, type Target } from './connection';
import { EXIT } from './exit-codes';
import { reportLines } from './report';
import { follow, jsonRenderer, textRenderer, type WatchEnd } from './watch';

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

const open = new Set<Target>();

/** Lets go of every server connection and stops an embedded engine (its store is flushed): Ctrl+C, errors. */
export async function closeAllTargets(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.allSettled(all.map((t) => t.close()));
}

/** Runs `fn` against the server the options name (or the embedded engine), then lets go of it. */
export async function withTarget<T>(cmd: Command, fn: (t: Target, g: GlobalOptions) => Promise<T>): Promise<T> {
  const g = globals(cmd);
  const t = await connect(g);
  open.add(t);
  try {
    return await fn(t, g);
  } finally {
    if (open.delete(t)) await t.close();
  }
}

export function write(s: string): void {
  process.stdout.write(s);
}

export function printJson(v: unknown): void {
  write(`${JSON.stringify(v, null, 2)}\n`);
}

/** `--json` prints the data as JSON; otherwise `text()` says it in lines. */
export function printData(g: GlobalOptions, data: unknown, text: () => string): void {
  if (g.json) return printJson(data);
  const t = text();
  write(t.endsWith('\n') || t === '' ? t : `${t}\n`);
}

/** Columns padded to their widest cell (the last one is not padded). */
export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

/** Adds the "Examples:" section of a command's --help (every command has at least one). */
export function examples<C extends Command>(cmd: C, ...lines: string[]): C {
  cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
  return cmd;
}

/** Whether to redraw lines in place: stdout is a terminal and NO_COLOR is not set (no-color.org). */
export function isRichTerminal(g: GlobalOptions): boolean {
  return process.stdout.isTTY === true && !process.env['NO_COLOR'] && g.color !== false && process.env['TERM'] !== 'dumb';
}

/** A repository URL as given; a folder as an absolute path (the server resolves nothing against the CLI's directory). */
export function sourceOf(given: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : path.resolve(given);
}

export interface FollowOptions {
  watch: boolean;
  /** Keep following while the execution waits for an approval (instead of exiting 5). */
  wait?: boolean;
}

/**
 * After a submission: with `--watch` (or when the engine runs in this process, which must not exit
 * before its execution ends) follows the execution and sets the exit code from how it ended.
 */
export async function afterSubmit(t: Target, g: GlobalOptions, id: string, o: FollowOptions): Promise<void> {
  if (!o.watch && !t.embedded) return;
  const quiet = !o.watch;
  // Without --watch (the embedded engine waiting for its execution) nothing is printed meanwhile: with
  // --json, stdout stays the one JSON document of the submission.
  const renderer = quiet ? { event: () => {}, reconnect: () => {}, finish: () => {} } : g.json ? jsonRenderer(write) : textRenderer(write, { tty: isRichTerminal(g), executionId: id });
  const end = await follow(t.api, id, renderer, { throughApprovals: o.wait === true });
  if (quiet && !g.json) write(endLine(id, end));
  process.exitCode = exitOf(end);
  // What it found, once it ended: the step summaries and the findings with their places.
  if (!g.json && end.status !== 'awaiting_approval') {
    const rigor = !id.startsWith('task_') && !id.startsWith('wf_');
    const r = await t.api.call<Record<string, unknown>>('GET', rigor ? `/api/v1/rigor/status/${encodeURIComponent(id)}` : `/api/workflows/${encodeURIComponent(id)}/status`).catch(() => null);
    const lines = reportLines(r?.['output']);
    if (lines.length > 0) write(`result:\n${lines.join('\n')}\n`);
  }
  if (end.status === 'awaiting_approval' && !g.json) {
    write(`${id} waits for approval ${end.approvalId}: cadre approve ${end.approvalId} (or cadre deny ${end.approvalId}), then cadre watch ${id}\n`);
    if (t.embedded) write(`  the engine runs in this process and stops with it: start a server (cadre serve) to decide and go on\n`);
  }
}

function endLine(id: string, end: WatchEnd): string {
  if (end.status === 'completed') return `${id} completed\n`;
  if (end.status === 'awaiting_approval') return '';
  return `${id} ${end.status}: ${end.message}\n`;
}

export function exitOf(end: WatchEnd): number {
  return end.status === 'completed' ? EXIT.OK : end.status === 'awaiting_approval' ? EXIT.AWAITING_APPROVAL : EXIT.FAILED;
}

/** Parses `--input` JSON (an object) or reads `--input-file`; one line naming what is wrong. */
export async function inputOf(o: { input?: string; inputFile?: string }): Promise<Record<string, unknown> | undefined> {
  if (o.input !== undefined && o.inputFile !== undefined) throw new CliError('give --input or --input-file, not both', EXIT.USAGE);
  let text: string | undefined = o.input;
  let where = '--input';
  if (o.inputFile !== undefined) {
    const { readFile } = await import('node:fs/promises');
    where = o.inputFile;
    try {
      text = o.inputFile === '-' ? await readStdin() : await readFile(o.inputFile, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read --input-file ${o.inputFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.USAGE);
    }
  }
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${where} is not JSON: ${(err as Error).message}`, EXIT.USAGE);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new CliError(`${where} must be a JSON object ({"field": ...})`, EXIT.USAGE);
  return v as Record<string, unknown>;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
