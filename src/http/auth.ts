import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../core/errors.js';
import { LOCAL_OWNER } from '../door.js';
import { TokenRefused, type AccessTokens } from './oauth.js';

export const API_KEY_HEADER = 'x-svc-api-key';

/** A JWS in compact form (header.payload.signature): a bearer of this shape is an access token, not a key. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

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

  /** The owner scope of a presented key, or undefined when it is none of the keys. */
  ownerOf(presented: string): string | undefined {
    const candidate = this.digest(presented);
    let match: Buffer | undefined;
    // Compare against every key without stopping early, so timing does not tell which key (or how many) matched.
    for (const digest of this.digests) if (timingSafeEqual(candidate, digest)) match = digest;
    return match && `key:${match.toString('base64url').slice(0, 22)}`;
  }

  private digest(key: string): Buffer {
    return createHmac('sha256', this.secret).update(key).digest();
  }
}

/**
 * Who a request to /mcp or /v1 is: an API key's owner, an access token's (when OAuth is on), or the one local client
 * when neither is configured. A key and a token each map to their own owner scope, so their sessions never mix.
 */
export class HttpAuth {
  constructor(
    readonly keys: ApiKeys,
    readonly tokens?: AccessTokens,
  ) {}

  get enabled(): boolean {
    return this.keys.enabled || this.tokens !== undefined;
  }

  /** For the start-up log line. */
  get scheme(): string {
    return [this.keys.enabled && 'api-key', this.tokens && 'oauth'].filter(Boolean).join('+') || 'none';
  }

  /**
   * The owner scope of the request. REST takes a key in `x-svc-api-key`; /mcp also takes `Authorization: Bearer KEY`.
   * With OAuth on, both take `Authorization: Bearer <access token>`. `x-svc-project-id` is accepted and ignored: keys
   * are scoped to one project already.
   */
  async authenticate(req: IncomingMessage, options: { bearer: boolean }): Promise<string> {
    if (!this.enabled) return LOCAL_OWNER;
    const key = headerValue(req, API_KEY_HEADER);
    if (key !== undefined) return this.keyOwner(key);
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      if (!this.tokens) {
        if (options.bearer) return this.keyOwner(bearer);
      } else {
        const owner = options.bearer ? this.keys.ownerOf(bearer) : undefined;
        if (owner) return owner;
        if (JWT_SHAPE.test(bearer)) return this.tokens.owner(bearer);
        throw new TokenRefused(
          'invalid_token',
          options.bearer
            ? 'The bearer token is neither an API key nor a JWT access token.'
            : `The bearer token is not a JWT access token (an API key goes in the ${API_KEY_HEADER} header).`,
        );
      }
    }
    throw new ServiceError('unauthorized', this.missing(options.bearer));
  }

  /** The `WWW-Authenticate` value of an auth failure: where to get a token with OAuth on; on /mcp a bare Bearer otherwise. */
  challenge(error: ServiceError, options: { mcp: boolean }): string | undefined {
    if (this.tokens) return this.tokens.challenge(error);
    return options.mcp && error.code === 'unauthorized' ? 'Bearer realm="browser-session-mcp"' : undefined;
  }

  private keyOwner(presented: string): string {
    const owner = this.keys.ownerOf(presented);
    if (owner) return owner;
    if (!this.keys.enabled)
      throw new ServiceError('unauthorized', 'This server takes no API keys: send an access token as Authorization: Bearer <token>.');
    throw new ServiceError('unauthorized', 'The API key is not valid.');
  }

  private missing(bearer: boolean): string {
    const key = `the ${API_KEY_HEADER} header${bearer ? ' or as Authorization: Bearer <key>' : ''}`;
    if (!this.tokens) return `Missing API key: send it in ${key}.`;
    return `Missing credentials: send an access token as Authorization: Bearer <token>${this.keys.enabled ? `, or an API key in ${key}` : ''}.`;
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
