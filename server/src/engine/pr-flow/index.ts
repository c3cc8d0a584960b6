/** The ACMF-gated pull-request flow and the incident chain (engine logic; the host's adapter implements the ports). */
export * from './ports';
export * from './pr-flow';
export * from './pr-body';
export * from './triggers';
