import assert from 'node:assert/strict';
import { parseConfig } from '../../../server/src/config/load';
import { isEngineError } from '../../../server/src/engine/errors';
import type { AttemptReport } from '../../../server/src/engine/resilience/retry';
import { createLanguageModel, OpenAiCompatible, retryAfterMs, TokenMeter, type CompletionRequest } from '../../../server/src/llm';
// The local OpenAI-compatible server: each request takes the next responder of its queue.
import { FakeProvider, json, type Responder } from './fake-provider';

const completion = (content: string, usage = true) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'test-model-0125',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  ...(usage ? { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } } : {}),
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-2',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'test-model-0125',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** Writes the SSE text in several TCP writes, splitting inside lines, with pauses between them. */
const sse = (events: unknown[], opts: { usage?: boolean; pieces?: number } = {}): Responder => (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const all = [
    ': keep-alive\n\n',
    ...events.map((e) => `data: ${JSON.stringify(e)}\n\n`),
    ...(opts.usage ? [`data: ${JSON.stringify({ id: 'chatcmpl-2', object: 'chat.completion.chunk', model: 'test-model-0125', choices: [], usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } })}\r\n\r\n`] : []),
    'data: [DONE]\n\n',
  ].join('');
  const n = opts.pieces ?? 7;
  const size = Math.ceil(all.length / n);
  let i = 0;
  const write = (): void => {
    if (i >= all.length) return void res.end();
    res.write(all.slice(i, i + size));
    i += size;
    setTimeout(write, 5);
  };
  write();
};

const messages: CompletionRequest['messages'] = [
  { role: 'system', content: 'You write user stories.' },
  { role: 'user', content: 'Users can reset their password.' },
];

describe('llm: OpenAiCompatible against a local OpenAI-compatible server', function () {
  this.timeout(10_000);
  const provider = new FakeProvider();
  const KEY = 'sk-test-0123456789abcdef';
  const env = { CADRE_TEST_LLM_KEY: KEY };
  const make = (extra: Partial<ConstructorParameters<typeof OpenAiCompatible>[0]> = {}) => new OpenAiCompatible({
    baseUrl: provider.baseUrl,
    model: 'test-model',
    apiKeyEnv: 'CADRE_TEST_LLM_KEY',
    env,
    retry: { baseDelayMs: 0, maxDelayMs: 5_000 },
    ...extra,
  });

  before(() => provider.start());
  after(() => provider.stop());
  beforeEach(() => {
    provider.seen = [];
    provider.queue = [];
  });

  it('non-streamed completion: the wire request, the text and the reported usage', async () => {
    provider.queue.push(json(200, completion('As a user, I want to reset my password.')));
    const r = await make().complete({ messages, maxTokens: 256, temperature: 0.2 });
    assert.equal(r.text, 'As a user, I want to reset my password.');
    assert.deepEqual(r.usage, { promptTokens: 12, completionTokens: 5, totalTokens: 17 });
    assert.equal(r.model, 'test-model-0125');
    assert.equal(r.finishReason, 'stop');
    assert.equal(r.usageEstimated, undefined);
    const seen = provider.seen[0]!;
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/v1/chat/completions');
    assert.equal(seen.headers['authorization'], `Bearer ${KEY}`);
    assert.match(String(seen.headers['content-type']), /application\/json/);
    assert.deepEqual(seen.body, { model: 'test-model', messages, stream: false, max_tokens: 256, temperature: 0.2 });
  });

  it('estimates usage (chars/4) when the provider reports none, and says so', async () => {
    provider.queue.push(json(200, completion('12345678', false)));
    const r = await make().complete({ messages });
    assert.equal(r.usageEstimated, true);
    const prompt = Math.ceil(messages[0]!.content.length / 4) + Math.ceil(messages[1]!.content.length / 4);
    assert.deepEqual(r.usage, { promptTokens: prompt, completionTokens: 2, totalTokens: prompt + 2 });
  });

  it('streams: chunks split across TCP writes, onToken in order, text assembled, usage from the final chunk', async () => {
    const pieces = ['As a ', 'user, ', 'I want ', 'to reset ', 'my password.'];
    provider.queue.push(sse([chunk({ role: 'assistant', content: '' }), ...pieces.map((p) => chunk({ content: p })), chunk({}, 'stop')], { usage: true, pieces: 11 }));
    const tokens: string[] = [];
    const r = await make().complete({ messages, onToken: (t) => tokens.push(t) });
    assert.deepEqual(tokens, pieces);
    assert.equal(r.text, pieces.join(''));
    assert.equal(r.finishReason, 'stop');
    assert.deepEqual(r.usage, { promptTokens: 20, completionTokens: 3, totalTokens: 23 });
    assert.equal(r.usageEstimated, undefined);
    assert.equal(provider.seen[0]!.body['stream'], true);
    assert.deepEqual(provider.seen[0]!.body['stream_options'], { include_usage: true });
    assert.match(String(provider.seen[0]!.headers['accept']), /text\/event-stream/);
  });

  it('streams without a usage chunk: estimated usage', async () => {
    provider.queue.push(sse([chunk({ content: 'abcd' }), chunk({ content: 'efgh' }, 'length')], { pieces: 3 }));
    const r = await make({ streamUsage: false }).complete({ messages, stream: true });
    assert.equal(r.text, 'abcdefgh');
    assert.equal(r.finishReason, 'length');
    assert.equal(r.usageEstimated, true);
    assert.equal(r.usage.completionTokens, 2);
    assert.equal(provider.seen[0]!.body['stream_options'], undefined);
  });

  it('429 with Retry-After: retried once after the delay, then succeeds', async () => {
    provider.queue.push(json(429, { error: { message: 'Rate limit reached', type: 'requests' } }, { 'retry-after': '1' }));
    provider.queue.push(json(200, completion('ok')));
    const reports: AttemptReport[] = [];
    const r = await make({ onAttempt: (a) => reports.push(a) }).complete({ messages });
    assert.equal(r.text, 'ok');
    assert.equal(provider.seen.length, 2);
    assert.equal(reports[0]!.retryInMs, 1000);
    const gap = provider.seen[1]!.at - provider.seen[0]!.at;
    assert.ok(gap >= 950, `waited ${gap} ms`);
  });

  it('500 then success: retried', async () => {
    provider.queue.push(json(500, { error: { message: 'The server had an error' } }));
    provider.queue.push(json(200, completion('recovered')));
    const r = await make().complete({ messages });
    assert.equal(r.text, 'recovered');
    assert.equal(provider.seen.length, 2);
  });

  it('5xx until the retries run out: a retryable error with the provider message', async () => {
    for (let i = 0; i < 3; i++) provider.queue.push(json(503, { error: { message: 'overloaded' } }));
    await assert.rejects(make({ maxRetries: 2 }).complete({ messages }), (err: unknown) => {
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_SKILL_UNAVAILABLE');
      assert.equal(err.retryable, true);
      assert.match(err.message, /HTTP 503.*overloaded/);
      assert.equal((err.details?.['retry'] as { attempts: number }).attempts, 3);
      return true;
    });
    assert.equal(provider.seen.length, 3);
  });

  it('401: not retried, the provider message kept, the key redacted', async () => {
    provider.queue.push(json(401, { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    provider.queue.push(json(200, completion('never')));
    await assert.rejects(make().complete({ messages }), (err: unknown) => {
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_SKILL_UNAVAILABLE');
      assert.equal(err.retryable, false);
      assert.match(err.message, /refused the credentials \(HTTP 401\): Incorrect API key provided: \[redacted\]/);
      assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes(KEY));
      return true;
    });
    assert.equal(provider.seen.length, 1);
  });

  it('400: not retried', async () => {
    provider.queue.push(json(400, { error: { message: 'model not found' } }));
    await assert.rejects(make().complete({ messages }), /rejected the request \(HTTP 400\): model not found/);
    assert.equal(provider.seen.length, 1);
  });

  it('times out an attempt that gets no answer (ERR_TIMEOUT)', async () => {
    provider.queue.push(() => { /* never answers */ });
    const started = Date.now();
    await assert.rejects(make({ timeoutMs: 150, maxRetries: 0 }).complete({ messages }), (err: unknown) => {
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_TIMEOUT');
      return true;
    });
    assert.ok(Date.now() - started < 2_000);
  });

  it('a timed-out stream that already produced text is not retried (no repeated tokens)', async () => {
    provider.queue.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ content: 'partial' }))}\n\n`); // then stalls
    });
    const tokens: string[] = [];
    await assert.rejects(make({ timeoutMs: 200, maxRetries: 2 }).complete({ messages, onToken: (t) => tokens.push(t) }), /interrupted after output began/);
    assert.deepEqual(tokens, ['partial']);
    assert.equal(provider.seen.length, 1);
  });

  it('aborts via the signal (ERR_CANCELLED), also mid-stream', async () => {
    provider.queue.push(() => { /* never answers */ });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(make().complete({ messages, signal: ac.signal }), (err: unknown) => isEngineError(err) && err.code === 'ERR_CANCELLED');

    provider.queue.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ content: 'first' }))}\n\n`); // then stalls
    });
    const mid = new AbortController();
    const tokens: string[] = [];
    await assert.rejects(
      make().complete({ messages, signal: mid.signal, onToken: (t) => { tokens.push(t); mid.abort(); } }),
      (err: unknown) => isEngineError(err) && err.code === 'ERR_CANCELLED',
    );
    assert.deepEqual(tokens, ['first']);

    const pre = new AbortController();
    pre.abort();
    await assert.rejects(make().complete({ messages, signal: pre.signal }), (err: unknown) => isEngineError(err) && err.code === 'ERR_CANCELLED');
  });

  it('a network failure is retryable ERR_SKILL_UNAVAILABLE', async () => {
    const m = new OpenAiCompatible({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', maxRetries: 0 });
    await assert.rejects(m.complete({ messages }), (err: unknown) => isEngineError(err) && err.code === 'ERR_SKILL_UNAVAILABLE' && err.retryable);
  });

  it('the key comes from the env var, is sent only as the bearer token, and never shows in logs or JSON', async () => {
    provider.queue.push(json(500, { error: { message: 'boom' } }));
    provider.queue.push(json(200, completion('fine')));
    const logs: string[] = [];
    const model = make({ onAttempt: (a) => logs.push(JSON.stringify(a, (_k, v: unknown) => (v instanceof Error ? { message: v.message, details: (v as { details?: unknown }).details } : v))) });
    await model.complete({ messages });
    assert.equal(provider.seen[1]!.headers['authorization'], `Bearer ${KEY}`);
    assert.ok(!JSON.stringify(provider.seen.map((s) => s.body)).includes(KEY));
    assert.ok(logs.length === 2 && logs.every((l) => !l.includes(KEY)));
    assert.ok(!JSON.stringify(model).includes(KEY));
    assert.ok(!String(model).includes(KEY));
  });

  it('no key configured: no Authorization header (local servers need none)', async () => {
    provider.queue.push(json(200, completion('fine')));
    await new OpenAiCompatible({ baseUrl: provider.baseUrl, model: 'm' }).complete({ messages });
    assert.equal(provider.seen[0]!.headers['authorization'], undefined);
  });

  it('createLanguageModel from the configuration: api_key from ${VAR}, metered tokens', async () => {
    const config = parseConfig([
      'llm:',
      '  provider: openai-compatible',
      `  base_url: ${provider.baseUrl}`,
      '  model: test-model',
      '  api_key: ${MY_LLM_KEY}',
      '  timeout_ms: 5000',
      '  max_retries: 1',
    ].join('\n'), '.cadre.yaml', { MY_LLM_KEY: 'sk-from-config' });
    const llm = createLanguageModel(config.llm);
    assert.equal(llm.id, 'openai-compatible');
    provider.queue.push(json(200, completion('a')));
    provider.queue.push(json(200, completion('b')));
    const meter = new TokenMeter();
    const step = meter.metered(llm, 'exec-1');
    await step.complete({ messages });
    await step.complete({ messages });
    assert.equal(provider.seen[0]!.headers['authorization'], 'Bearer sk-from-config');
    assert.equal(step.used.totalTokens, 34);
    assert.deepEqual(meter.totals('exec-1'), { promptTokens: 24, completionTokens: 10, totalTokens: 34, calls: 2, estimatedCalls: 0 });
  });
});

describe('llm: retryAfterMs', () => {
  it('reads seconds, an HTTP date and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs({ 'retry-after': '2' }, now), 2000);
    assert.equal(retryAfterMs({ 'retry-after': '0' }, now), 0);
    assert.equal(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now), 3000);
    assert.equal(retryAfterMs({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, now), 0);
    assert.equal(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now), 250);
    assert.equal(retryAfterMs({ 'retry-after': 'soon' }, now), undefined);
    assert.equal(retryAfterMs({}, now), undefined);
  });
});
