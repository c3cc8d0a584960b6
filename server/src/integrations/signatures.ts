/**
 * HMAC-SHA256 signatures of inbound webhooks, compared in constant time over the exact bytes received.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const HEX64 = /^[0-9a-f]{64}$/i;

export function hmacHex(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** True when `hex` (64 hex digits) is the HMAC of `body`; a malformed value is false, never an exception. */
export function hexMatches(secret: string, body: Buffer, hex: string): boolean {
  if (!HEX64.test(hex)) return false;
  const want = Buffer.from(hmacHex(secret, body), 'hex');
  return timingSafeEqual(want, Buffer.from(hex.toLowerCase(), 'hex'));
}
