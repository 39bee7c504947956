import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../core/errors.js';
import { LOCAL_OWNER } from '../door.js';

export const API_KEY_HEADER = 'x-svc-api-key';

/**
 * API keys and the session scope each one grants. Each key is kept only as an HMAC under a per-process secret,
 * so the owner id is a hash that reveals nothing of the key, and comparing digests of equal length is constant-time.
 */
export class ApiKeys {
  private readonly digests: Buffer[];

  /** `secret`: a stable one (the profile store's) makes owner ids survive restarts; by default a per-process one. */
  constructor(
    keys: string[],
    private readonly secret: Buffer = randomBytes(32),
  ) {
    this.digests = [...new Set(keys)].map((key) => this.digest(key));
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /**
   * The owner scope of the request's key. REST takes `x-svc-api-key`; /mcp also takes `Authorization: Bearer KEY`.
   * `x-svc-project-id` is accepted and ignored: keys are scoped to one project already.
   */
  authenticate(req: IncomingMessage, options: { bearer: boolean }): string {
    if (!this.enabled) return LOCAL_OWNER;
    const presented = headerValue(req, API_KEY_HEADER) ?? (options.bearer ? bearerToken(req) : undefined);
    if (!presented) {
      throw new ServiceError(
        'unauthorized',
        `Missing API key: send it in the ${API_KEY_HEADER} header${options.bearer ? ' or as Authorization: Bearer <key>' : ''}.`,
      );
    }
    const candidate = this.digest(presented);
    let match: Buffer | undefined;
    // Compare against every key without stopping early, so timing does not tell which key (or how many) matched.
    for (const digest of this.digests) if (timingSafeEqual(candidate, digest)) match = digest;
    if (!match) throw new ServiceError('unauthorized', 'The API key is not valid.');
    return `key:${match.toString('base64url').slice(0, 22)}`;
  }

  private digest(key: string): Buffer {
    return createHmac('sha256', this.secret).update(key).digest();
  }
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(headerValue(req, 'authorization') ?? '');
  return match?.[1]?.trim() || undefined;
}
