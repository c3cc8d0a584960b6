/**
 * Fetching an allowed metrics or logs URL (Generate, once ACMF allowed `http_request`). Redirects are
 * refused (a redirect could leave the allowed prefix), the body is read up to a cap (a metrics
 * endpoint that never ends cannot exhaust memory) and the step's cancellation aborts the request.
 */
export const FETCH_TIMEOUT_MS = 15_000;
export const MAX_FETCH_BYTES = 256 * 1024 * 1024;

export async function fetchText(url: string, signal: AbortSignal, maxBytes = MAX_FETCH_BYTES): Promise<{ ok: true; text: string; contentType: string } | { ok: false; reason: string }> {
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'error',
      headers: { accept: 'application/openmetrics-text;version=1.0.0, text/plain;version=0.0.4;q=0.9, application/json;q=0.8, */*;q=0.5' },
      signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
    });
  } catch (e) {
    signal.throwIfAborted();
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, reason: `${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}` };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    return { ok: false, reason: `${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
    size += r.value.byteLength;
    if (size > maxBytes) {
      await reader!.cancel().catch(() => {});
      return { ok: false, reason: `${url}: larger than ${Math.round(maxBytes / 1024 / 1024)} MB; not read` };
    }
    chunks.push(r.value);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8'), contentType: res.headers.get('content-type') ?? '' };
}
