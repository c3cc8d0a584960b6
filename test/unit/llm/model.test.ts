import assert from 'node:assert/strict';
import { DEFAULT_CONFIG } from '../../../server/src/config/schema';
import { parseConfig } from '../../../server/src/config/load';
import { isEngineError } from '../../../server/src/engine/errors';
import { createLanguageModel, NoModel, RelayModel, TokenMeter, type CompletionRequest } from '../../../server/src/llm';

const messages: CompletionRequest['messages'] = [{ role: 'user', content: 'Hello there, model.' }];

describe('llm: NoModel', () => {
  it('is the default provider and refuses with a clear ERR_SKILL_UNAVAILABLE', async () => {
    assert.equal(DEFAULT_CONFIG.llm.provider, 'none');
    const m = createLanguageModel(DEFAULT_CONFIG.llm);
    assert.ok(m instanceof NoModel);
    assert.equal(m.id, 'none');
    await assert.rejects(m.complete({ messages }), (err: unknown) => {
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_SKILL_UNAVAILABLE');
      assert.match(err.message, /no language model configured/);
      return true;
    });
  });
});

describe('llm: RelayModel', () => {
  it('passes the request through and returns the relay result', async () => {
    let got: CompletionRequest | undefined;
    const m = new RelayModel(async (req) => {
      got = req;
      req.onToken?.('hi');
      return { text: 'hi', usage: { promptTokens: 4, completionTokens: 1, totalTokens: 5 }, model: 'editor-gpt', finishReason: 'stop' };
    });
    const tokens: string[] = [];
    const r = await m.complete({ messages, maxTokens: 10, onToken: (t) => tokens.push(t) });
    assert.equal(m.id, 'editor');
    assert.deepEqual(got?.messages, messages);
    assert.equal(got?.maxTokens, 10);
    assert.deepEqual(tokens, ['hi']);
    assert.deepEqual(r, { text: 'hi', usage: { promptTokens: 4, completionTokens: 1, totalTokens: 5 }, model: 'editor-gpt', finishReason: 'stop' });
  });

  it('estimates missing usage and marks it', async () => {
    const m = new RelayModel(async () => ({ text: 'abcdefgh', model: 'x', finishReason: 'stop' }));
    const r = await m.complete({ messages });
    assert.equal(r.usageEstimated, true);
    assert.deepEqual(r.usage, { promptTokens: 5, completionTokens: 2, totalTokens: 7 });
  });

  it('unconnected (provider editor before the extension wires it): ERR_SKILL_UNAVAILABLE; connect later', async () => {
    const config = parseConfig('llm:\n  provider: editor\n', '.cadre.yaml', {});
    const m = createLanguageModel(config.llm) as RelayModel;
    assert.equal(m.id, 'editor');
    assert.equal(m.connected, false);
    await assert.rejects(m.complete({ messages }), (err: unknown) => isEngineError(err) && err.code === 'ERR_SKILL_UNAVAILABLE' && /not connected/.test(err.message));
    m.connect(async () => ({ text: 'ok', model: 'm', finishReason: 'stop' }));
    assert.equal((await m.complete({ messages })).text, 'ok');
  });

  it('wraps a relay crash as ERR_SKILL_FAILED and honours abort', async () => {
    const crash = new RelayModel(async () => { throw new Error('editor went away'); });
    await assert.rejects(crash.complete({ messages }), (err: unknown) => isEngineError(err) && err.code === 'ERR_SKILL_FAILED' && /editor went away/.test(err.message));
    const slow = new RelayModel(() => new Promise(() => { /* never */ }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 10);
    await assert.rejects(slow.complete({ messages, signal: ac.signal }), (err: unknown) => isEngineError(err) && err.code === 'ERR_CANCELLED');
  });
});

describe('llm: TokenMeter', () => {
  it('keeps per-execution totals and per-wrapper totals', async () => {
    const meter = new TokenMeter();
    const relay = new RelayModel(async () => ({ text: 'x', usage: { promptTokens: 10, completionTokens: 2, totalTokens: 12 }, model: 'm', finishReason: 'stop' }));
    const estimated = new RelayModel(async () => ({ text: 'abcd', model: 'm', finishReason: 'stop' }));
    const a = meter.metered(relay, 'e1');
    const b = meter.metered(estimated, 'e1');
    await a.complete({ messages });
    await a.complete({ messages });
    await b.complete({ messages });
    assert.equal(a.used.totalTokens, 24);
    assert.equal(b.used.estimatedCalls, 1);
    const t = meter.totals('e1');
    assert.equal(t.calls, 3);
    assert.equal(t.estimatedCalls, 1);
    assert.equal(t.totalTokens, 24 + 5 + 1);
    assert.deepEqual(meter.totals('other'), { promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0, estimatedCalls: 0 });
    meter.clear('e1');
    assert.equal(meter.totals('e1').calls, 0);
    // A failed completion records nothing.
    await assert.rejects(meter.metered(new NoModel(), 'e2').complete({ messages }));
    assert.equal(meter.totals('e2').calls, 0);
  });
});

describe('llm: configuration', () => {
  it('defaults, and required keys for openai-compatible', () => {
    assert.deepEqual(DEFAULT_CONFIG.llm, { provider: 'none', timeout_ms: 120_000, max_retries: 2 });
    assert.throws(() => parseConfig('llm:\n  provider: openai-compatible\n', '.cadre.yaml', {}), /llm\.base_url: is required[\s\S]*llm\.model: is required|llm\.model[\s\S]*llm\.base_url/);
  });

  it('api_key must be ${VAR}', () => {
    assert.throws(
      () => parseConfig('llm:\n  provider: openai-compatible\n  base_url: http://127.0.0.1:8080/v1\n  model: m\n  api_key: sk-inline\n', '.cadre.yaml', {}),
      /llm\.api_key: secret values must come from the environment/,
    );
    const c = parseConfig('llm:\n  provider: openai-compatible\n  base_url: http://127.0.0.1:8080/v1\n  model: m\n  api_key: ${K}\n', '.cadre.yaml', { K: 'sk-1' });
    assert.equal(c.llm.api_key, 'sk-1');
  });
});
