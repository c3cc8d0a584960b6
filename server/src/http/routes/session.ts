/**
 * Sessions for the session-protected endpoint family: `POST /api/session` (bearer key) sets the
 * `cadre_session` cookie; `DELETE /api/session` ends it. See server/src/auth/sessions.ts.
 */
import type { Sessions } from '../../auth/sessions';
import { clearedSessionCookie, sessionCookie } from '../cookies';
import { defineRoute, type RouteDef } from '../route';
import { SessionSchema } from '../schemas';

export function sessionRoutes(deps: { sessions: Pick<Sessions, 'create' | 'end' | 'ttlMs'> }): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/session',
      auth: 'key', tenancy: 'tenant',
      summary: 'Open a session (sets the cadre_session cookie)',
      description: 'Needs the bearer key. The cookie is HttpOnly, SameSite=Strict, Path=/, Max-Age 8 h, and is accepted by ' +
        'session-protected endpoints (POST|GET /api/agents/{id}/{action}) from the same origin only. The session ends ' +
        'with DELETE /api/session, after 8 h, or when its key is revoked.',
      tags: ['auth'],
      responses: { 201: { description: 'Session opened; the token is in Set-Cookie only', schema: SessionSchema } },
      handler: async (ctx) => {
        const { token, record } = await deps.sessions.create(ctx.principal);
        return {
          status: 201,
          body: { keyId: record.keyId, createdAt: record.createdAt, expiresAt: record.expiresAt },
          headers: { 'set-cookie': sessionCookie(token, Math.floor(deps.sessions.ttlMs / 1000)), 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/session',
      auth: 'session', tenancy: 'tenant',
      summary: 'End the current session (log out)',
      description: 'With the cookie: ends that session. With only the bearer key: nothing to end. Either way the cookie is cleared.',
      tags: ['auth'],
      responses: { 204: { description: 'Session ended; the cookie is cleared' } },
      handler: async (ctx) => {
        if (ctx.credential.kind === 'session') await deps.sessions.end(ctx.credential.session.id);
        return { status: 204, headers: { 'set-cookie': clearedSessionCookie() } };
      },
    }),
  ];
}
