/**
 * workspace/executeCommand for the `cadre.*` commands: each starts an agent action on the engine this
 * process owns and follows the execution's events with LSP work-done progress
 * (window/workDoneProgress/create, then $/progress begin → report… → end). The command answers
 * with the execution id as soon as the execution is accepted.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResponseError, ErrorCodes, type ExecuteCommandParams, type WorkDoneProgressReporter } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { PHASES, type EngineEvent } from '../../../protocol/events';
import { CadreCommands, type CadreCommandArgs, type CadreCommandResult } from '../../../protocol/lsp';
import type { Runtime } from '../host/runtime';
import type { Finding } from '../skills/findings/finding';
import { documentFile, documentFindings } from './document-scanner';

export interface CommandTarget {
  agentId: string;
  action: string;
  title: string;
}

export const COMMAND_TARGETS: Readonly<Record<string, CommandTarget>> = {
  [CadreCommands.scanFile]: { agentId: 'security-ai', action: 'secrets', title: 'security-ai: scanning for secrets' },
  [CadreCommands.reviewSelection]: { agentId: 'review-ai', action: 'review', title: 'review-ai: reviewing' },
  [CadreCommands.fixSelection]: { agentId: 'coder-ai', action: 'fix', title: 'coder-ai: fixing' },
  [CadreCommands.explainSelection]: { agentId: 'debug-ai', action: 'explain', title: 'debug-ai: explaining' },
  [CadreCommands.generateTests]: { agentId: 'tester-ai', action: 'generate-tests', title: 'tester-ai: generating tests' },
};

export const COMMAND_IDS: readonly string[] = Object.keys(COMMAND_TARGETS);

/** The subset of an execution's event source this module needs. */
export interface ExecutionEventSource {
  replay(afterSeq: number): Promise<EngineEvent[]>;
  subscribe(listener: (e: EngineEvent) => void): () => void;
  isFinished(): boolean;
}

/**
 * Drives a progress reporter from an execution's events: phase_started → message, work_progress →
 * percentage (the five RIGOR phases share 0–100, never going back), execution_completed/failed → end.
 * Events emitted before the subscription are picked up from the replay (deduplicated by seq).
 */
export function followExecution(source: ExecutionEventSource, reporter: WorkDoneProgressReporter, title: string, onEnd?: (e: EngineEvent | null) => void): () => void {
  const seen = new Set<number>();
  let percent = 0;
  let ended = false;
  let unsubscribe: () => void = () => {};
  const end = (e: EngineEvent | null) => {
    if (ended) return;
    ended = true;
    unsubscribe();
    reporter.done();
    onEnd?.(e);
  };
  const at = (phase: string, progress: number) => {
    const i = Math.max(0, PHASES.indexOf(phase as (typeof PHASES)[number]));
    const p = Math.round(((i + Math.min(100, Math.max(0, progress)) / 100) / PHASES.length) * 100);
    percent = Math.max(percent, Math.min(100, p));
    return percent;
  };
  const handle = (e: EngineEvent) => {
    if (ended || seen.has(e.seq)) return;
    seen.add(e.seq);
    switch (e.type) {
      case 'phase_started':
        reporter.report(at(e.phase, 0), `${e.agent_id}: ${e.phase}`);
        break;
      case 'work_progress':
        reporter.report(at(e.phase, e.progress), `${e.agent_id}: ${e.phase} ${Math.round(e.progress)}%`);
        break;
      case 'phase_completed':
        reporter.report(at(e.phase, 100), `${e.agent_id}: ${e.phase} done`);
        break;
      case 'execution_completed':
      case 'execution_failed':
        end(e);
        break;
      default:
        break;
    }
  };
  reporter.begin(title, 0, 'queued', false);
  unsubscribe = source.subscribe(handle);
  // Events emitted before the subscription come from the stored log; `seen` drops the duplicates.
  const catchUp = (events: EngineEvent[]) => {
    for (const e of events) handle(e);
    let finished = false;
    try {
      finished = source.isFinished();
    } catch {
      finished = true;
    }
    if (finished) end(null);
  };
  source.replay(0).then(catchUp, () => catchUp([]));
  return () => end(null);
}

export interface CommandDeps {
  runtime(): Runtime | null;
  /** The workspace folder that contains the document (multi-root), else the first folder. */
  workspaceDir(uri: string): string | undefined;
  document(uri: string): TextDocument | undefined;
  /** A reporter bound to a token the client created (window/workDoneProgress/create) or gave. */
  progress(workDoneToken: ExecuteCommandParams['workDoneToken']): Promise<WorkDoneProgressReporter>;
  log(line: string): void;
}

function argsOf(params: ExecuteCommandParams): CadreCommandArgs {
  const a = params.arguments?.[0] as Partial<CadreCommandArgs> | undefined;
  if (!a || typeof a.uri !== 'string') throw new ResponseError(ErrorCodes.InvalidParams, `${params.command} needs an argument { uri, range }`);
  const zero = { line: 0, character: 0 };
  return { uri: a.uri, range: a.range ?? { start: zero, end: zero } };
}

function fsPathOf(uri: string): string | null {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : null;
  } catch {
    return null;
  }
}

/** The document's findings that carry a fix, within the 0-based range when one is given. */
function fixableIn(doc: TextDocument | undefined, file: string, range: CadreCommandArgs['range'] | null): Finding[] {
  if (!doc) return [];
  return documentFindings(doc.getText(), file).filter((f) => {
    if (!f.fix?.edits.length) return false;
    if (!range || !f.range) return true;
    // Finding lines are 1-based, LSP lines 0-based.
    return f.range.startLine - 1 <= range.end.line && f.range.endLine - 1 >= range.start.line;
  });
}

export async function executeCommand(params: ExecuteCommandParams, deps: CommandDeps): Promise<CadreCommandResult> {
  const target = COMMAND_TARGETS[params.command];
  if (!target) throw new ResponseError(ErrorCodes.InvalidParams, `unknown command ${params.command}`);
  const args = argsOf(params);
  const runtime = deps.runtime();
  if (!runtime) throw new ResponseError(ErrorCodes.InternalError, 'Cadre is still starting');
  if (runtime.attached) throw new ResponseError(ErrorCodes.InternalError, `Cadre commands run in the process that owns the data directory (pid ${runtime.ownerPid}); this one is attached to it`);
  const engine = runtime.engine;
  if (!engine.skills.get(target.agentId, target.action)) throw new ResponseError(ErrorCodes.InternalError, `${target.agentId} ${target.action}: not available yet`);

  const abs = fsPathOf(args.uri);
  const ws = deps.workspaceDir(args.uri);
  const file = documentFile(args.uri, ws);
  // security-ai scans the file's folder; the other agents work on the file's workspace folder with the file named.
  const source = params.command === CadreCommands.scanFile ? (abs ? path.dirname(abs) : ws) : (ws ?? (abs ? path.dirname(abs) : undefined));
  const doc = deps.document(args.uri);
  const r = args.range;
  const empty = r.start.line === r.end.line && r.start.character === r.end.character;
  const selection = doc && !empty ? doc.getText(r) : undefined;
  const input: Record<string, unknown> = {
    uri: args.uri, file, range: args.range,
    ...(selection ? { selection } : {}),
    ...(target.agentId === 'debug-ai' ? { trace: selection ?? doc?.getText() ?? '' } : { files: [file] }),
    // coder-ai fixes what the document's diagnostics show (with a fix) in the selection, or in the whole file.
    ...(params.command === CadreCommands.fixSelection ? { findings: fixableIn(doc, file, empty ? null : r) } : {}),
  };
  const where = empty ? file : `${file}:${r.start.line + 1}-${r.end.line + 1}`;
  const prompt = `${target.agentId} ${target.action} ${where}`;

  const reporter = await deps.progress(params.workDoneToken);
  let rec;
  try {
    rec = await engine.executions.runAction(target.agentId, target.action, { prompt, input, source }, { keyId: null, callbackSecret: null });
  } catch (err) {
    reporter.begin(target.title, 0, undefined, false);
    reporter.done();
    throw new ResponseError(ErrorCodes.InternalError, `${target.agentId} ${target.action} could not start: ${(err as Error).message}`);
  }
  const id = rec.id;
  followExecution(engine.executions.eventSource(id), reporter, target.title, (e) => {
    if (e?.type === 'execution_failed') deps.log(`${id} ${e.status}: ${e.error.message}`);
  });
  return { executionId: id };
}
