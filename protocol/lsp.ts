/**
 * Custom LSP messages between the extension (client) and the bundled server. Types only.
 */

export type ServerHealth = 'starting' | 'ok' | 'warning' | 'error' | 'stopped';

/** Server → client, once, when the engine and the HTTP API are up (or attached to another owner). */
export namespace ServerReadyNotification {
  export const method = 'cadre/serverReady';
  export interface Params {
    /** Base URL of the local REST + SSE API. */
    url: string;
    port: number;
    /** True when another process owns the data directory and this server is its client. */
    attached: boolean;
    ownerPid: number;
    dataDir: string;
    version: string;
    /** A newly created API key, sent once on first start so the client can keep it in SecretStorage. */
    newApiKey?: string;
  }
}

/** Server → client, whenever the server's health changes. */
export namespace ServerStatusNotification {
  export const method = 'cadre/status';
  export interface Params {
    health: ServerHealth;
    message: string;
  }
}

/** When the server scans open documents for diagnostics (client → server, in `initializationOptions`). */
export type DiagnosticsMode = 'onSave' | 'onChange';

/** `initializationOptions` the client may send with `initialize`. */
export interface CadreInitializationOptions {
  /** Default `onSave`: scan on open and save; `onChange` also scans (debounced) while typing. */
  diagnostics?: DiagnosticsMode;
}

/** The `data` of a Cadre diagnostic: the finding's fingerprint and its fix, when it has one. */
export interface CadreDiagnosticData {
  fingerprint: string;
  fix?: {
    description: string;
    /** 1-based positions, `endColumn` exclusive; `file` workspace-relative (the Finding shape). */
    edits: Array<{ file: string; range: { startLine: number; startColumn: number; endLine: number; endColumn: number }; newText: string }>;
  };
}

/** Commands the server's code actions offer; `cadre.*` commands run on the server through workspace/executeCommand. */
export const CadreCommands = {
  scanFile: 'cadre.scanFile',
  reviewSelection: 'cadre.reviewSelection',
  fixSelection: 'cadre.fixSelection',
  explainSelection: 'cadre.explainSelection',
  generateTests: 'cadre.generateTests',
} as const;
export type CadreCommand = (typeof CadreCommands)[keyof typeof CadreCommands];

/** The single argument of every Cadre command: the document and the selection (0-based LSP range). */
export interface CadreCommandArgs {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** What a Cadre command returns: the execution it started. */
export interface CadreCommandResult {
  executionId: string;
}
