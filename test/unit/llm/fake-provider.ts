/**
 * A local OpenAI-compatible chat completions server for tests (the real wire format): each request
 * takes the next responder of the queue. `closed` records requests whose connection the client cut
 * before an answer (cancellation).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  at: number;
}
export type Responder = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void;

export class FakeProvider {
  server: Server;
  seen: Seen[] = [];
  queue: Responder[] = [];
  /** Requests whose connection closed before the response ended. */
  closed = 0;
  /** Answers a request when the queue is empty (a multi-agent run asks in an order the test does not fix); none: 500. */
  fallback: Responder | undefined;
  baseUrl = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      res.on('close', () => {
        if (!res.writableEnded) this.closed++;
      });
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
        this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() });
        const next = this.queue.shift() ?? this.fallback;
        if (!next) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'no responder queued' } }));
          return;
        }
        next(req, res, body);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.seen = [];
    this.queue = [];
    this.closed = 0;
    this.fallback = undefined;
  }

  /** The messages of the n-th request, joined (for asserting what the prompt held). */
  prompt(n = 0): string {
    const m = (this.seen[n]?.body['messages'] ?? []) as Array<{ content: string }>;
    return m.map((x) => x.content).join('\n');
  }
}

export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Responder => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};

/** A non-streamed chat completion with the given content and usage. */
export const completion = (content: string, usage: { prompt: number; completion: number } | null = { prompt: 12, completion: 5 }) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'test-model-0125',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  ...(usage ? { usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion } } : {}),
});

/** Answers with `completion(content, usage)`. */
export const answer = (content: string, usage?: { prompt: number; completion: number } | null): Responder => json(200, completion(content, usage));

/** The system message of a chat request (where each skill says who it is: "You are coder-ai. ..."). */
export function systemPrompt(body: Record<string, unknown>): string {
  const m = (body['messages'] ?? []) as Array<{ role: string; content: string }>;
  return m.filter((x) => x.role === 'system').map((x) => x.content).join('\n');
}

/**
 * Routes each request by the agent its system prompt names ("You are <agent>"): the responder of that
 * agent, else `otherwise` (default: a 500 naming the agent, so an unexpected caller is visible).
 */
export const byAgent = (routes: Record<string, Responder>, otherwise?: Responder): Responder => (req, res, body) => {
  const who = /You are ([a-z]+-ai)\b/.exec(systemPrompt(body))?.[1] ?? '';
  const r = routes[who] ?? otherwise ?? json(500, { error: { message: `no responder for "${who || 'an unknown caller'}"` } });
  r(req, res, body);
};

/** Never answers (until the client goes away). */
export const hang: Responder = () => {};

/** A streamed completion: one chunk per piece, then the usage chunk and [DONE]. */
export const stream = (pieces: string[], usage = { prompt: 20, completion: 3 }): Responder => (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'chatcmpl-2', object: 'chat.completion.chunk', model: 'test-model-0125', choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [chunk({ role: 'assistant' }), ...pieces.map((p) => chunk({ content: p })), chunk({}, 'stop'),
    { id: 'chatcmpl-2', object: 'chat.completion.chunk', model: 'test-model-0125', choices: [], usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion } }];
  let i = 0;
  const next = (): void => {
    if (i < events.length) {
      res.write(`data: ${JSON.stringify(events[i++])}\n\n`);
      setTimeout(next, 3);
    } else res.end('data: [DONE]\n\n');
  };
  next();
};
