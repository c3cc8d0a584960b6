/**
 * Inline RIGOR progress: while an agent works on a file or selection, the affected lines get a
 * gutter icon and an after-line text (`review-ai · Inspect 40% · 0.72`); executions started from
 * this editor also get a cancellable progress notification. Everything is cleared when the
 * execution ends. Driven by the server's `cadre/event` notifications only.
 */
import * as vscode from 'vscode';
import { PHASES, type EngineEvent } from '../../protocol/events';
import { CancelExecutionRequest, ClientCommands } from '../../protocol/lsp';
import { ClientRequests, ServerNotifications } from '../../protocol/lsp-messages';
import { overallPercent, progressLabel } from './labels';
import type { ServerHost } from './server-host';

export interface ExecutionTarget {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

interface Tracked {
  id: string;
  title: string;
  target: ExecutionTarget | undefined;
  agent: string;
  phase: string;
  progress: number;
  confidence: number | null;
  /** Overall 0–100 across the five phases (never goes back). */
  percent: number;
  report?: (message: string, percent: number) => void;
  finish?: () => void;
  onEnd?: (status: string) => void;
}

const ENDED_KEPT = 100;

export class InlineProgress implements vscode.Disposable {
  private readonly tracked = new Map<string, Tracked>();
  /** The last executions seen ending, for a follow() that comes after the end. */
  private readonly ended = new Map<string, Extract<EngineEvent, { type: 'execution_completed' | 'execution_failed' }>>();
  private readonly decoration: vscode.TextEditorDecorationType;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<Tracked | undefined>();
  /** Fires on every progress change of an execution this editor follows (for the status bar). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly host: ServerHost, iconPath: vscode.Uri) {
    this.decoration = vscode.window.createTextEditorDecorationType({
      gutterIconPath: iconPath,
      gutterIconSize: 'contain',
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
      after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em', fontStyle: 'italic' },
    });
    this.subscriptions.push(
      host.onNotification(ServerNotifications.event, (e: EngineEvent) => this.onEvent(e)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.render()),
    );
  }

  /** The execution that most recently reported progress, for the status bar. */
  get latest(): Tracked | undefined {
    let out: Tracked | undefined;
    for (const t of this.tracked.values()) out = t;
    return out;
  }

  /**
   * Follows an execution started from this editor: decoration on its target (if any) and a
   * cancellable notification. Events that arrived before this call are not replayed; the next
   * event updates the view.
   */
  follow(id: string, title: string, target?: ExecutionTarget, onEnd?: (status: string) => void): void {
    const t: Tracked = { id, title, target, agent: title.split(' ')[0] ?? title, phase: 'queued', progress: 0, confidence: null, percent: 0, ...(onEnd ? { onEnd } : {}) };
    // A fast execution may end before the command that started it has answered: end it at once.
    const ended = this.ended.get(id);
    if (ended) {
      this.end(t, ended.type === 'execution_completed' ? 'completed' : ended.status, ended.type === 'execution_failed' ? ended.error : undefined);
      return;
    }
    this.tracked.set(id, t);
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Cadre: ${title}`, cancellable: true }, (progress, token) => {
      token.onCancellationRequested(() => {
        this.host.request(ClientRequests.cancel, { executionId: id } satisfies CancelExecutionRequest.Params).catch((err: unknown) => {
          void vscode.window.showErrorMessage(`Cadre could not cancel ${id}: ${(err as Error).message}`);
        });
      });
      return new Promise<void>((resolve) => {
        let last = 0;
        t.report = (message, percent) => {
          progress.report({ message, increment: Math.max(0, percent - last) });
          last = Math.max(last, percent);
        };
        t.finish = resolve;
      });
    });
    this.render();
    this.changed.fire(t);
  }

  private onEvent(e: EngineEvent): void {
    if (e.type === 'execution_completed' || e.type === 'execution_failed') this.rememberEnd(e);
    const t = this.tracked.get(e.execution_id);
    if (!t) return;
    switch (e.type) {
      case 'step_started':
        Object.assign(t, { agent: e.agent_id, phase: 'Research', progress: 0 });
        break;
      case 'phase_started':
        Object.assign(t, { agent: e.agent_id, phase: e.phase, progress: 0 });
        break;
      case 'work_progress':
        Object.assign(t, { agent: e.agent_id, phase: e.phase, progress: e.progress, confidence: e.confidence });
        break;
      case 'phase_completed':
        Object.assign(t, { agent: e.agent_id, phase: e.phase, progress: 100 });
        break;
      case 'step_completed':
        t.confidence = e.confidence;
        break;
      case 'approval_requested':
        t.phase = `waiting for approval (${e.action})`;
        t.progress = 0;
        break;
      case 'execution_completed':
      case 'execution_failed':
        this.end(t, e.type === 'execution_completed' ? 'completed' : e.status, e.type === 'execution_failed' ? e.error : undefined);
        return;
      default:
        return;
    }
    t.percent = Math.max(t.percent, PHASES.includes(t.phase as (typeof PHASES)[number]) ? overallPercent(t.phase, t.progress) : t.percent);
    t.report?.(progressLabel(t), t.percent);
    this.render();
    this.changed.fire(t);
  }

  private rememberEnd(e: Extract<EngineEvent, { type: 'execution_completed' | 'execution_failed' }>): void {
    this.ended.set(e.execution_id, e);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
  }

  private end(t: Tracked, status: string, error?: { code: string; message: string }): void {
    this.tracked.delete(t.id);
    t.finish?.();
    this.render();
    this.changed.fire(undefined);
    t.onEnd?.(status);
    if (status !== 'failed') return;
    // A step that needs a language model says so; offer the setting right there.
    const needsModel = error?.code === 'ERR_SKILL_UNAVAILABLE' && /language model/.test(error.message);
    const actions = needsModel ? ['Select Language Model Provider', 'Show Executions'] : ['Show Executions'];
    void vscode.window.showWarningMessage(`Cadre: ${t.title} failed${error ? `: ${error.message}` : ''}`, ...actions).then((choice) => {
      if (choice === 'Select Language Model Provider') void vscode.commands.executeCommand(ClientCommands.selectLlmProvider);
      if (choice === 'Show Executions') void vscode.commands.executeCommand('cadre.executions.focus');
    });
  }

  private render(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const uri = editor.document.uri.toString();
      const options: vscode.DecorationOptions[] = [];
      for (const t of this.tracked.values()) {
        if (t.target?.uri !== uri) continue;
        const r = t.target.range;
        // A whole-file target (empty range at 0:0) decorates the first line only.
        const endLine = Math.max(r.start.line, r.end.character === 0 && r.end.line > r.start.line ? r.end.line - 1 : r.end.line);
        for (let line = r.start.line; line <= endLine; line++) {
          options.push({
            range: new vscode.Range(line, 0, line, 0),
            ...(line === r.start.line ? { renderOptions: { after: { contentText: progressLabel(t) } } } : {}),
            hoverMessage: `Cadre: ${t.title} (${t.id})`,
          });
        }
      }
      editor.setDecorations(this.decoration, options);
    }
  }

  dispose(): void {
    for (const t of this.tracked.values()) t.finish?.();
    this.tracked.clear();
    for (const s of this.subscriptions) s.dispose();
    this.decoration.dispose();
    this.changed.dispose();
  }
}
