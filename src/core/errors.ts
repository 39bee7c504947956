/** Stable error codes, shared by every surface. The HTTP status lives with the code so each door maps errors the same way. */
export const ERROR_STATUS = {
  invalid_argument: 400,
  invalid_json: 400,
  url_not_allowed: 400,
  selector_not_found: 400,
  selector_ambiguous: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  session_not_found: 404,
  profile_not_found: 404,
  run_not_found: 404,
  frame_not_found: 404,
  ref_not_found: 404,
  method_not_allowed: 405,
  timeout: 408,
  action_timeout: 408,
  cancelled: 499,
  payload_too_large: 413,
  model_not_configured: 422,
  profiles_not_configured: 422,
  profile_unreadable: 422,
  model_error: 422,
  extraction_invalid: 422,
  evaluation_failed: 422,
  page_too_large: 422,
  agent_error: 422,
  integration_error: 422,
  session_closed: 410,
  recording_not_enabled: 409,
  element_covered: 409,
  session_limit: 429,
  viewer_limit: 429,
  page_crashed: 500,
  internal: 500,
  not_implemented: 501,
  recording_unavailable: 501,
  navigation_failed: 502,
  browser_unavailable: 503,
  session_unavailable: 503,
  navigation_timeout: 504,
  host_not_allowed: 403,
  option_not_allowed: 403,
  operation_not_allowed: 403,
  variable_not_allowed: 403,
  unsupported_media_type: 415,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, options?: { details?: unknown; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options?.details;
  }

  toJSON(): { code: ErrorCode; message: string; details?: unknown } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** Anything thrown inside the core becomes a ServiceError; unknown failures become `internal` with a generic message. */
export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (isAbortError(err)) return cancelledError(err);
  return new ServiceError('internal', 'Internal error; the server log has the details.', { cause: err });
}

export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || (err as { code?: string }).code === 'ABORT_ERR');
}

/** Throws `cancelled` when the signal has fired; call between steps of long operations. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledError();
}

/** The one `cancelled` error: the client aborted or went away. */
export function cancelledError(cause?: unknown): ServiceError {
  return new ServiceError('cancelled', 'The operation was cancelled by the client.', cause === undefined ? undefined : { cause });
}

/**
 * Settles like `work`, or rejects with `cancelled` as soon as the signal fires. The work is not stopped by this: work
 * that acts on the page checks the signal itself between its steps, so what is left of it after the cancel is short.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  work.catch(() => undefined);
  if (signal.aborted) return Promise.reject(cancelledError());
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(cancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** The error of an operation stopped because the server is shutting down (and of one that arrives meanwhile). */
export function shuttingDownError(): ServiceError {
  return new ServiceError(
    'browser_unavailable',
    'The server is shutting down: this operation was stopped before it finished (its session is being closed). Retry on a running server.',
  );
}
