/**
 * The "Cadre Trace" channel for vscode-languageclient, driven by `cadre.trace.server`.
 *
 * vscode-languageclient 10 traces only while its trace channel's log level is Trace (a level the
 * person sets on the channel, which no API can set) and reads `cadre.trace.server` for the verbosity.
 * Cadre's setting is documented as the switch, so this channel reports the Trace level whenever the
 * setting is not `off` (and fires the level change when the setting changes, which the library
 * follows at once), and writes every line as is to a plain output channel.
 */
import * as vscode from 'vscode';

const SETTING = 'cadre.trace.server';

function traced(): boolean {
  return vscode.workspace.getConfiguration('cadre').get<string>('trace.server', 'off') !== 'off';
}

export class TraceChannel implements vscode.LogOutputChannel {
  private readonly channel: vscode.OutputChannel;
  private readonly levelEmitter = new vscode.EventEmitter<vscode.LogLevel>();
  private readonly settingSub: vscode.Disposable;
  readonly onDidChangeLogLevel = this.levelEmitter.event;
  logLevel: vscode.LogLevel;

  constructor(readonly name = 'Cadre Trace') {
    this.channel = vscode.window.createOutputChannel(name);
    this.logLevel = traced() ? vscode.LogLevel.Trace : vscode.LogLevel.Off;
    this.settingSub = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SETTING)) return;
      const level = traced() ? vscode.LogLevel.Trace : vscode.LogLevel.Off;
      if (level === this.logLevel) return;
      this.logLevel = level;
      this.levelEmitter.fire(level);
    });
  }

  trace(message: string): void {
    this.channel.appendLine(message);
  }
  debug(message: string): void {
    this.channel.appendLine(message);
  }
  info(message: string): void {
    this.channel.appendLine(message);
  }
  warn(message: string): void {
    this.channel.appendLine(message);
  }
  error(error: string | Error): void {
    this.channel.appendLine(typeof error === 'string' ? error : error.stack ?? error.message);
  }
  append(value: string): void {
    this.channel.append(value);
  }
  appendLine(value: string): void {
    this.channel.appendLine(value);
  }
  replace(value: string): void {
    this.channel.replace(value);
  }
  clear(): void {
    this.channel.clear();
  }
  show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserveFocus === 'boolean' || columnOrPreserveFocus === undefined) this.channel.show(columnOrPreserveFocus);
    else this.channel.show(columnOrPreserveFocus, preserveFocus);
  }
  hide(): void {
    this.channel.hide();
  }
  dispose(): void {
    this.settingSub.dispose();
    this.levelEmitter.dispose();
    this.channel.dispose();
  }
}
