/**
 * Built-in routes that describe the server itself: `/v1/health` (no key, not rate limited),
 * `/v1/info` and `/v1/openapi.json` (both listed from the router, so they cannot miss a route).
 */
import { defineRoute, type RouteDef } from '../route';
import { HealthReportSchema, InfoSchema, OpenApiDocumentSchema } from '../schemas';
import type { HealthReport, HttpApp } from '../app';

export const API_VERSION = 'v1';
export const OPENAPI_PATH = '/v1/openapi.json';
export const API_REFERENCE = 'docs/api.md';

export function systemRoutes(app: Pick<HttpApp, 'endpoints' | 'openapi'>, deps: { version: string; health(): HealthReport; lockProof?(nonce: string): string | null }): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/health',
      auth: 'none', tenancy: 'public',
      summary: 'Connectivity and service status',
      description: 'Needs no key and is not rate limited. 503 when a component is degraded.',
      tags: ['system'],
      responses: {
        200: { description: 'The service is healthy', schema: HealthReportSchema },
        503: { description: 'A component is degraded', schema: HealthReportSchema },
      },
      handler: (ctx) => {
        const reported = deps.health();
        // The process's memory now (all threads' RSS, the main heap), with the host's worker counts.
        const m = process.memoryUsage();
        const h = { ...reported, memory: { worker_threads: 0, warm_agents: 0, ...reported.memory, rss_bytes: m.rss, heap_used_bytes: m.heapUsed } };
        // The owner of the data directory proves its lock token for a nonce (host/owner-lock.ts); the token never leaves.
        const nonce = ctx.req.headers['x-cadre-lock-nonce'];
        const proof = typeof nonce === 'string' && nonce.length > 0 && nonce.length <= 128 ? deps.lockProof?.(nonce) : null;
        const headers = proof ? { 'x-cadre-lock-proof': proof } : undefined;
        return h.status === 'ok' ? { status: 200, body: h, ...(headers ? { headers } : {}) } : { status: 503, body: h, ...(headers ? { headers } : {}) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/info',
      auth: 'key', tenancy: 'catalog',
      summary: 'API version, available endpoints, documentation links',
      tags: ['system'],
      responses: { 200: { description: 'About this API', schema: InfoSchema } },
      handler: () => ({
        status: 200,
        body: {
          api_version: API_VERSION,
          service: 'cadre' as const,
          version: deps.version,
          endpoints: app.endpoints(),
          documentation: { openapi: OPENAPI_PATH, reference: API_REFERENCE },
        },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: OPENAPI_PATH,
      auth: 'key', tenancy: 'catalog',
      summary: 'OpenAPI 3.1 description of every endpoint',
      tags: ['system'],
      responses: { 200: { description: 'The OpenAPI document', schema: OpenApiDocumentSchema } },
      handler: (ctx) => {
        const doc = app.openapi();
        // The server entry follows the Host the caller used (already checked against the allowed hosts).
        return { status: 200, body: { ...doc, servers: [{ url: `http://${ctx.req.headers.host ?? '127.0.0.1'}` }] } };
      },
    }),
  ];
}
