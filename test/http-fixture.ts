import { request as httpRequest } from 'node:http';
import { createParser } from 'eventsource-parser';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { serveHttp, type HttpOptions, type HttpServer } from '../src/http/server.js';

export interface TestHttp<S extends BrowserService = BrowserService> {
  url: string;
  port: number;
  service: S;
  http: HttpServer;
  close(): Promise<void>;
}

/**
 * Starts the HTTP surface in-process on 127.0.0.1, port 0, over a real BrowserService. The default service has the
 * egress policy "all", so tests with API keys still reach the 127.0.0.1 test sites; egress tests pass their own service.
 */
export async function startHttp<S extends BrowserService = BrowserService>(
  options: Partial<HttpOptions> = {},
  // S is BrowserService itself whenever no service is given.
  service: S = new BrowserService({ logger: silentLogger(), egressPolicy: 'all' }) as S,
): Promise<TestHttp<S>> {
  const http = await serveHttp(service, { port: 0, host: '127.0.0.1', apiKeys: [], allowedHosts: [], ...options });
  return {
    url: http.url,
    port: http.port,
    service,
    http,
    close: async () => {
      await http.close();
      await service.close();
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  json: any;
}

/** One REST call with fetch; `key` goes in x-svc-api-key. */
export async function api(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; key?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  if (options.key) headers['x-svc-api-key'] = options.key;
  const res = await fetch(base + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

export interface SseEvent {
  event: string;
  data: any;
}

/** Reads a whole text/event-stream response with a real SSE parser. */
export async function readSse(res: Response, onEvent?: (event: SseEvent) => void): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const parser = createParser({
    onEvent: (message) => {
      const event = { event: message.event ?? 'message', data: JSON.parse(message.data) };
      events.push(event);
      onEvent?.(event);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

/** A request with node:http, which (unlike fetch) lets a test set the Host header. */
export function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
