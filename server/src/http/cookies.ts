/** The session cookie: reading it from `Cookie`, writing `Set-Cookie`. */
import { SESSION_COOKIE } from '../auth/sessions';

/** The value of cookie `name` in a `Cookie` header, or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim().replace(/^"|"$/g, '');
  }
  return null;
}

/**
 * `cadre_session=<token>; Path=/; Max-Age=<s>; HttpOnly; SameSite=Strict`. No `Secure`: the API is
 * plain HTTP on loopback, and a Secure cookie would not come back over http://127.0.0.1 in every browser.
 */
export function sessionCookie(token: string, maxAgeS: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict`;
}

/** Tells the browser to drop the session cookie. */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict`;
}
