/**
 * The kit's model endpoint: an OpenAI-compatible server on 127.0.0.1 that the agent is pointed at. It records every
 * Chat Completions request (so prompt tokens are counted the same way for any model) and answers it by forwarding to
 * an upstream endpoint, or, in relay mode, by writing DIR/request-N.json and waiting for DIR/answer-N.json, so that a
 * person or an assistant can be the model.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { countTokens } from '../../src/core/tokens.js';
import { chatBodyTokens, promptTokens } from './tokens.js';

export type ModelBackend =
  /** Forward each request to `${baseURL}/chat/completions` with the caller's Authorization header. */
  | { upstream: string }
  /** Write each request to dir/request-N.json and wait up to timeoutMs for dir/answer-N.json. */
  | { relay: { dir: string; timeoutMs: number; pollMs?: number; log?: (line: string) => void } };

export interface ModelServer {
  /** For the agent's `options.baseURL`. */
  baseURL: string;
  /** Request bodies received since the last reset, oldest first. */
  requests: unknown[];
  /** Set when a relay answer did not come in time: the person has gone, later tasks should not start. */
  abandoned: boolean;
  /** The task now running, named in the relay's log lines. */
  label: string;
  reset(): void;
  close(): Promise<void>;
}

/** A simplified relay answer: text and/or tool calls, arguments as an object or a JSON string. */
export interface RelayAnswer {
  content?: string | null;
  tool_calls?: Array<{ name: string; arguments?: unknown; id?: string }>;
}

export async function startModelServer(backend: ModelBackend): Promise<ModelServer> {
  const pending = new Set<() => void>();
  let sequence = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => fail(res, 502, String(err)));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    if (req.method !== 'POST' || !(req.url ?? '').split('?')[0]!.endsWith('/chat/completions'))
      return fail(res, 404, `no route ${req.method} ${req.url}: only POST /v1/chat/completions`);
    const body = JSON.parse(raw) as Record<string, unknown>;
    models.requests.push(body);
    if ('upstream' in backend) {
      const answer = await fetch(`${backend.upstream.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) },
        body: raw,
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      return void res.end(Buffer.from(await answer.arrayBuffer()));
    }
    const { dir, timeoutMs, pollMs = 250, log = console.error } = backend.relay;
    const n = ++sequence;
    const answerFile = join(dir, `answer-${n}.json`);
    writeFileSync(join(dir, `request-${n}.json`), `${JSON.stringify(body, null, 2)}\n`);
    log(
      `relay${models.label ? ` (${models.label})` : ''}: wrote ${join(dir, `request-${n}.json`)}; waiting up to ${Math.round(timeoutMs / 1000)} s for ${answerFile}` +
        (n === 1 ? ' (a Chat Completions body, or {"content": "...", "tool_calls": [{"name": "...", "arguments": {...}}]})' : ''),
    );
    const answer = await waitForFile(answerFile, timeoutMs, pollMs, res);
    if (answer === undefined) {
      if (!res.destroyed) {
        models.abandoned = true;
        fail(res, 504, `relay: no ${answerFile} within ${Math.round(timeoutMs / 1000)} s`);
      }
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completionOf(JSON.parse(answer), body, n)));
  }

  /** The file's text once it exists and parses as JSON (a writer may still be writing it), or undefined at the deadline. */
  function waitForFile(file: string, timeoutMs: number, pollMs: number, res: ServerResponse): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve) => {
      const check = (): void => {
        pending.delete(stop);
        if (res.destroyed) return resolve(undefined);
        if (existsSync(file)) {
          const text = readFileSync(file, 'utf8');
          try {
            JSON.parse(text);
            return resolve(text);
          } catch {
            // Not complete yet: read again at the next poll.
          }
        }
        if (Date.now() >= deadline) return resolve(undefined);
        timer = setTimeout(check, pollMs);
        pending.add(stop);
      };
      const stop = (): void => {
        clearTimeout(timer);
        resolve(undefined);
      };
      let timer: NodeJS.Timeout | undefined;
      check();
    });
  }

  if ('relay' in backend) mkdirSync(backend.relay.dir, { recursive: true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const models: ModelServer = {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: [],
    abandoned: false,
    label: '',
    reset: () => void (models.requests.length = 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const stop of [...pending]) stop();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return models;
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } }));
}

/** A Chat Completions response body from a relay answer: one as it is, or the simplified {content, tool_calls}. */
export function completionOf(answer: unknown, request: Record<string, unknown>, n: number): unknown {
  if (answer && typeof answer === 'object' && 'choices' in answer) return answer;
  const simple = (answer ?? {}) as RelayAnswer;
  const calls = (simple.tool_calls ?? []).map((call, i) => ({
    id: call.id ?? `call_relay_${n}_${i}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}) },
  }));
  const content = simple.content ?? null;
  const counted = promptTokens(chatBodyTokens(request));
  const output = countTokens(`${content ?? ''}${JSON.stringify(calls)}`);
  return {
    id: `chatcmpl-relay${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) },
        logprobs: null,
        finish_reason: calls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: counted, completion_tokens: output, total_tokens: counted + output },
  };
}
