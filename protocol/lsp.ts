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
