import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { EgressRefusedError } from '../egress/index.js';
import { cancelledError, ServiceError } from '../errors.js';
import type { Provider } from './types.js';

/** What a provider SDK's error looks like from outside (both SDKs share this shape). */
interface SdkErrorLike {
  name?: string;
  status?: number;
  message?: string;
  error?: unknown;
}

const PROVIDER_NAMES: Record<Provider, string> = { openai: 'OpenAI', anthropic: 'Anthropic' };
const KEY_VARS: Record<Provider, string> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' };

export interface ModelErrorContext {
  provider: Provider;
  model: string;
  signal?: AbortSignal;
  /** Values that must never appear in a message (API keys). */
  secrets: Array<string | undefined>;
}

/** Any failure of a provider call becomes `cancelled` or `model_error` with a message a user can act on and no secret in it. */
export function toModelError(err: unknown, ctx: ModelErrorContext): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = (err ?? {}) as SdkErrorLike;
  const who = `${PROVIDER_NAMES[ctx.provider]} model "${ctx.model}"`;
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  // Checked before the abort: a refusal ends the SDK call by aborting it (endsOnRefusal), so it is not retried.
  const refusal = err instanceof EgressRefusedError ? err : cause instanceof EgressRefusedError ? cause : undefined;
  if (refusal) {
    return new ServiceError(
      'model_error',
      `The ${who} was not contacted: its address is refused by the egress policy "public" (${refusal.reason}). The operator can open it with --egress-allow ${refusal.host}:${refusal.port}.`,
      { cause: err },
    );
  }
  if (
    ctx.signal?.aborted ||
    err instanceof OpenAI.APIUserAbortError ||
    err instanceof Anthropic.APIUserAbortError ||
    e.name === 'AbortError'
  ) {
    return cancelledError(err);
  }
  if (err instanceof OpenAI.APIConnectionTimeoutError || err instanceof Anthropic.APIConnectionTimeoutError) {
    return new ServiceError(
      'model_error',
      `The ${who} did not answer in time (request timed out). Try again, or raise modelClientOptions.timeout.`,
      { cause: err },
    );
  }
  if (err instanceof OpenAI.APIConnectionError || err instanceof Anthropic.APIConnectionError) {
    // The egress fetch puts the reason (a timeout, a refused connection) on the cause; the SDKs only say "Connection error."
    const reason = cause instanceof Error ? cause.message : (e.message ?? 'connection failed');
    return new ServiceError(
      'model_error',
      `Could not reach the ${who}: ${redact(reason, ctx.secrets)}. Check the base URL and the network.`,
      { cause: err },
    );
  }
  if (typeof e.status === 'number') {
    const detail = redact(serverMessage(e), ctx.secrets);
    const hint =
      e.status === 401 || e.status === 403
        ? ` The API key was rejected; check ${KEY_VARS[ctx.provider]} or modelClientOptions.apiKey.`
        : e.status === 404
          ? ' Check the model name.'
          : e.status === 429
            ? ' Rate limited; try again later.'
            : '';
    return new ServiceError('model_error', `The ${who} failed with HTTP ${e.status}: ${detail}.${hint}`, {
      cause: err,
      details: { status: e.status },
    });
  }
  return new ServiceError('model_error', `The ${who} failed: ${redact(e.message ?? String(err), ctx.secrets)}`, { cause: err });
}

/** The provider's own error text when its body had one, else the SDK's message. */
function serverMessage(e: SdkErrorLike): string {
  const body = e.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const text = typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : e.message;
  return (text ?? 'no message').replace(/\s+/g, ' ').slice(0, 500).replace(/\.$/, '');
}

export function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('***');
  return out;
}

/** The answer stopped at the model's output token limit; `who` names the model ("The OpenAI model "gpt-4o""). */
export function cutOffError(who: string): ServiceError {
  return new ServiceError('model_error', `${who} answer was cut off at its output token limit; narrow the instruction or the selector.`);
}

const NOT_JSON = 'invalid_json';

/** The answer was not the JSON asked for: extract asks once more, with this message, before failing (isNotJson). */
export function notJsonError(message: string): ServiceError {
  return new ServiceError('model_error', message, { details: { reason: NOT_JSON } });
}

/** Whether an error is a model's answer that was not the JSON asked for (notJsonError). */
export function isNotJson(err: unknown): err is ServiceError {
  return err instanceof ServiceError && (err.details as { reason?: string } | undefined)?.reason === NOT_JSON;
}
