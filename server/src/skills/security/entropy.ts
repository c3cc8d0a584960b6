/** Shannon entropy and alphabet helpers for secret detection. */

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

export type Alphabet = 'hex' | 'base64' | 'other';

export function alphabetOf(s: string): Alphabet {
  if (/^[0-9a-fA-F]+$/.test(s)) return 'hex';
  if (/^[A-Za-z0-9+/=_-]+$/.test(s)) return 'base64';
  return 'other';
}

/**
 * Thresholds for generic assignments (bits/char, minimum length). Random hex of 20+ chars sits
 * around 3.5-4.0, random base64 of 16+ chars around 3.8-4.5; English words and identifiers below 3.3.
 */
export const ENTROPY_THRESHOLDS = {
  hex: { minLength: 20, minEntropy: 3.0 },
  base64: { minLength: 16, minEntropy: 3.5 },
  other: { minLength: 12, minEntropy: 3.3 },
  /** Password-like names (password, passwd, pwd, pass) accept shorter, human-made values. */
  password: { minLength: 8, minEntropy: 2.8 },
} as const;

export function passesEntropy(value: string, passwordLike: boolean): boolean {
  const t = passwordLike ? ENTROPY_THRESHOLDS.password : ENTROPY_THRESHOLDS[alphabetOf(value)];
  return value.length >= t.minLength && shannonEntropy(value) >= t.minEntropy;
}
