import { AsyncLocalStorage } from 'node:async_hooks';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';
import { unbracket } from './address.js';
import { EgressRefusedError, type EgressPolicy } from './policy.js';

export interface DispatcherOptions {
  policy: EgressPolicy;
  connectTimeoutMs: number;
  /** Longest wait for a response's headers once the request is sent. */
  headersTimeoutMs: number;
  logger: Logger;
}

/** The SDK call in progress (see endsOnRefusal): a refusal aborts it. */
const sdkCall = new AsyncLocalStorage<AbortController>();

/**
 * Runs an SDK call whose requests go through the egress fetch so that a refused address ends it at once: the SDKs
 * retry every failed fetch (with back-off), but give up when the call's signal is aborted. Rejects with the
 * EgressRefusedError itself; any other failure is the call's own.
 */
export async function endsOnRefusal<T>(signal: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const refusal = new AbortController();
  try {
    return await sdkCall.run(refusal, () => call(signal ? AbortSignal.any([signal, refusal.signal]) : refusal.signal));
  } catch (err) {
    if (refusal.signal.aborted) throw refusal.signal.reason;
    throw err;
  }
}

/**
 * An undici dispatcher whose every connection resolves the host once, checks the addresses against the policy and
 * connects to a checked address (TLS still verifies the host name), within a bounded connect and header time.
 */
export function createDispatcher({ policy, connectTimeoutMs, headersTimeoutMs, logger }: DispatcherOptions): Dispatcher {
  const base = buildConnector({ timeout: connectTimeoutMs });
  // Bodies are bounded by their callers (SDK timeouts, MCP request timeouts); an MCP SSE stream may idle for long.
  if (policy.name === 'all') return new Agent({ connect: base, headersTimeout: headersTimeoutMs, bodyTimeout: 0 });
  const connect: buildConnector.connector = (options, callback) => {
    const name = unbracket(options.hostname);
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    let timer: NodeJS.Timeout | undefined;
    const resolving = policy.resolve(name, port);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`resolving ${name} took longer than ${connectTimeoutMs} ms`)), connectTimeoutMs);
    });
    Promise.race([resolving, timeout])
      .finally(() => clearTimeout(timer))
      .then(
        (targets) =>
          base({ ...options, hostname: targets[0]!.address, servername: options.servername ?? (isIP(name) ? undefined : name) }, callback),
        (err: Error) => {
          if (err instanceof EgressRefusedError)
            logger.info({ host: err.host, port: err.port, reason: err.reason }, 'egress refused an outbound request');
          callback(err, null);
        },
      );
  };
  return new Agent({ connect, headersTimeout: headersTimeoutMs, bodyTimeout: 0 });
}

/**
 * `fetch` over a dispatcher, for the SDKs' `fetch` options; `signal` (the operation's) aborts every request too.
 * Failures keep the reason on top: a refusal or a timeout, rather than undici's bare "fetch failed".
 */
export function fetchVia(dispatcher: Dispatcher, signal?: AbortSignal): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => !!s);
    try {
      return await undiciFetch(
        input as never,
        {
          ...(init as object),
          dispatcher,
          signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
        } as never,
      );
    } catch (err) {
      const explained = explain(err, input);
      if (explained instanceof EgressRefusedError) sdkCall.getStore()?.abort(explained);
      throw explained;
    }
  }) as unknown as typeof fetch;
}

function explain(err: unknown, input: string | URL | Request): unknown {
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof EgressRefusedError) return cause;
  const code = (cause as { code?: string } | undefined)?.code;
  const where = new URL(typeof input === 'string' || input instanceof URL ? input : input.url).origin;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new Error(`${where} accepted the connection but sent no response in time`, { cause: err });
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new Error(`connecting to ${where} timed out`, { cause: err });
  if (cause instanceof Error && !(err as Error).name?.includes('Abort')) return new Error(`${where}: ${cause.message}`, { cause: err });
  return err;
}
