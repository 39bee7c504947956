import { createHmac } from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { ServiceError } from '../core/errors.js';
import { isLoopbackBind } from './hosts.js';

/** --oauth-*: access tokens from the operator's authorization server accepted at /mcp and /v1 (docs/http.md#oauth). */
export interface OAuthConfig {
  /** The authorization server's issuer URL, as its metadata names it. */
  issuer: string;
  /** The `aud` a token must carry; by default the resource URL, `<public URL>/mcp`. */
  audience?: string;
  /** The claim whose value is the caller's owner scope; default `sub`. */
  ownerClaim?: string;
  /** Scopes every token must carry, advertised as `scopes_supported`. */
  scopes?: string[];
}

/** Where the server's MCP endpoint is, and what the metadata names as the protected resource. */
const RESOURCE_PATH = '/mcp';
const METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Skew allowed between the authorization server's clock and ours, for `exp` and `nbf`. */
const CLOCK_TOLERANCE_S = 30;
/** After a failed discovery, requests meanwhile are refused at once rather than each asking the issuer again. */
const DISCOVERY_RETRY_MS = 10_000;
/** Signature algorithms of public keys: a JWKS never holds a shared secret, and `none` is no signature. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const REALM = 'browser-session-mcp';

type OAuthErrorCode = 'invalid_token' | 'insufficient_scope';

/** A bearer token refused: its challenge carries the OAuth error, so a client knows to get another token. */
export class TokenRefused extends ServiceError {
  constructor(
    readonly oauthError: OAuthErrorCode,
    message: string,
  ) {
    super(oauthError === 'insufficient_scope' ? 'forbidden' : 'unauthorized', message);
  }
}

export function isTokenRefused(err: unknown): err is TokenRefused {
  return err instanceof TokenRefused;
}

interface Issuer {
  /** The `iss` tokens carry: the issuer its metadata names. */
  issuer: string;
  keys: JWTVerifyGetKey;
}

/**
 * Verifies JWT access tokens against the issuer's published keys and maps each to an owner scope, and serves the
 * RFC 9728 metadata that tells clients where to get them. The keys are found through the issuer's metadata on first
 * use and cached by jose (refetched for an unknown `kid`).
 */
export class AccessTokens {
  private readonly issuerUrl: string;
  private readonly ownerClaim: string;
  private readonly scopes: string[];
  private base?: string;
  private discovery?: Promise<Issuer>;
  private failedAt?: number;

  constructor(
    private readonly config: OAuthConfig,
    private readonly deps: {
      /** The HMAC key of owner ids, shared with the API keys: stable when the profile store gives one. */
      secret: Buffer;
      /** --public-url: where clients reach this server; needed off loopback. */
      publicUrl?: string;
      /** The bind address. */
      host: string;
      /** Bound on each request to the issuer. */
      timeoutMs: number;
      logger: Logger;
    },
  ) {
    this.issuerUrl = checkIssuer(config.issuer);
    this.ownerClaim = config.ownerClaim || 'sub';
    this.scopes = config.scopes ?? [];
    if (deps.publicUrl !== undefined) this.base = checkPublicUrl(deps.publicUrl);
    else if (!isLoopbackBind(deps.host))
      throw new Error(
        `--oauth-issuer needs --public-url when listening on ${deps.host}: the URL clients use is the resource tokens are issued for.`,
      );
  }

  /**
   * Called once the server listens: without --public-url, the resource is at the address it listens on. Reads the
   * issuer's metadata now, so a wrong issuer shows in the log at start rather than at the first token.
   */
  serveAt(listening: string): void {
    this.base ??= listening;
    this.issuer().catch(() => undefined);
  }

  /** The protected resource: the URL of /mcp that clients use, and the default audience. */
  get resource(): string {
    return `${this.base!}${RESOURCE_PATH}`;
  }

  /** RFC 9728's place for the resource's metadata: the well-known path, then the resource's own path (`/mcp`). */
  get metadataUrl(): string {
    return `${this.base!}${METADATA_PATH}${RESOURCE_PATH}`;
  }

  /** The metadata is served at its path-suffixed place (what clients derive from /mcp) and at the root form. */
  isMetadataPath(pathname: string): boolean {
    return pathname === METADATA_PATH || pathname === METADATA_PATH + RESOURCE_PATH;
  }

  /** RFC 9728 protected resource metadata. */
  metadata(): Record<string, unknown> {
    return {
      resource: this.resource,
      authorization_servers: [this.issuerUrl],
      bearer_methods_supported: ['header'],
      ...(this.scopes.length ? { scopes_supported: this.scopes } : {}),
      resource_name: REALM,
    };
  }

  /** The `WWW-Authenticate` value of a 401 (or of a 403 for missing scopes): where the metadata is, and why. */
  challenge(error: ServiceError): string {
    const params: Array<[string, string]> = [['realm', REALM]];
    if (isTokenRefused(error)) params.push(['error', error.oauthError], ['error_description', error.message]);
    if (this.scopes.length) params.push(['scope', this.scopes.join(' ')]);
    params.push(['resource_metadata', this.metadataUrl]);
    return `Bearer ${params.map(([name, value]) => `${name}="${quoted(value)}"`).join(', ')}`;
  }

  /**
   * The owner scope of a valid token: `oauth:` and an HMAC of the issuer and the owner claim's value, so it never
   * collides with a key's owner and the claim (an e-mail address, say) never reaches a log or a session listing.
   */
  async owner(token: string): Promise<string> {
    const issuer = await this.issuer();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, issuer.keys, {
        issuer: issuer.issuer,
        audience: this.config.audience ?? this.resource,
        requiredClaims: ['exp'],
        clockTolerance: CLOCK_TOLERANCE_S,
        algorithms: ALGORITHMS,
      }));
    } catch (err) {
      throw this.refusal(err);
    }
    const granted = grantedScopes(payload);
    const missing = this.scopes.filter((scope) => !granted.includes(scope));
    if (missing.length) throw new TokenRefused('insufficient_scope', `The access token lacks the scope ${missing.join(' ')}.`);
    const value = payload[this.ownerClaim];
    if ((typeof value !== 'string' && typeof value !== 'number') || value === '')
      throw new TokenRefused('invalid_token', `The access token has no "${this.ownerClaim}" claim to scope its sessions by.`);
    const digest = createHmac('sha256', this.deps.secret)
      .update(`${issuer.issuer}\n${String(value)}`)
      .digest();
    return `oauth:${digest.toString('base64url').slice(0, 22)}`;
  }

  private issuer(): Promise<Issuer> {
    if (!this.discovery || (this.failedAt !== undefined && Date.now() - this.failedAt > DISCOVERY_RETRY_MS)) {
      this.failedAt = undefined;
      this.discovery = discoverIssuer(this.issuerUrl, this.deps.timeoutMs).catch((err: unknown) => {
        this.failedAt = Date.now();
        this.deps.logger.warn({ issuer: this.issuerUrl, reason: (err as Error).message }, 'OAuth: the issuer metadata could not be read');
        throw unreachable();
      });
    }
    return this.discovery;
  }

  /** A jose failure as the caller's answer; the token and its claims are never logged. */
  private refusal(err: unknown): ServiceError {
    if (err instanceof errors.JWTExpired) return new TokenRefused('invalid_token', 'The access token has expired.');
    if (err instanceof errors.JWTClaimValidationFailed) {
      const why: Record<string, string> = {
        aud: 'was not issued for this server (its audience)',
        iss: 'was not issued by the configured authorization server',
        nbf: 'is not valid yet',
        exp: 'has no expiry',
      };
      return new TokenRefused('invalid_token', `The access token ${why[err.claim] ?? `has an invalid "${err.claim}" claim`}.`);
    }
    if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError)) {
      this.deps.logger.warn({ issuer: this.issuerUrl, reason: (err as Error).message }, "OAuth: the issuer's keys could not be fetched");
      return unreachable();
    }
    this.deps.logger.debug({ reason: err.code }, 'OAuth: access token refused');
    return new TokenRefused('invalid_token', 'The access token is not valid (its signature or format).');
  }
}

function unreachable(): ServiceError {
  return new ServiceError(
    'unauthorized',
    "The access token could not be checked: the authorization server's keys could not be read. The server log has the details.",
  );
}

/** Scopes as RFC 9068 (`scope`, space-separated) or as some servers send them (`scp`, a list). */
function grantedScopes(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

/** The issuer's metadata (RFC 8414, then OpenID Connect Discovery) and the key set it names. */
async function discoverIssuer(issuerUrl: string, timeoutMs: number): Promise<Issuer> {
  const url = new URL(issuerUrl);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    ...new Set([
      `${url.origin}/.well-known/oauth-authorization-server${path}`,
      `${url.origin}/.well-known/openid-configuration${path}`,
      `${url.origin}${path}/.well-known/openid-configuration`,
    ]),
  ];
  const failures: string[] = [];
  for (const candidate of candidates) {
    let metadata: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(candidate, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
      if (!res.ok) {
        await res.body?.cancel();
        failures.push(`${candidate}: HTTP ${res.status}`);
        continue;
      }
      metadata = (await res.json()) as typeof metadata;
    } catch (err) {
      failures.push(`${candidate}: ${(err as Error).message}`);
      continue;
    }
    if (typeof metadata.issuer !== 'string' || typeof metadata.jwks_uri !== 'string') {
      failures.push(`${candidate}: no issuer or jwks_uri`);
      continue;
    }
    if (metadata.issuer.replace(/\/$/, '') !== issuerUrl.replace(/\/$/, ''))
      throw new Error(`${candidate} names the issuer ${metadata.issuer}, not ${issuerUrl}`);
    return { issuer: metadata.issuer, keys: createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: timeoutMs }) };
  }
  throw new Error(failures.join('; '));
}

function checkIssuer(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`--oauth-issuer "${value}" is not a URL.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackBind(url.hostname)))
    throw new Error(`--oauth-issuer must be an https URL (http only on loopback): ${value}`);
  if (url.search || url.hash) throw new Error(`--oauth-issuer must have no query or fragment: ${value}`);
  return value;
}

/** The origin clients reach the server at; a path would move /mcp and the metadata out of the server's reach. */
function checkPublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`--public-url "${value}" is not a URL.`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash)
    throw new Error(`--public-url must be an http(s) origin with no path, e.g. https://browser.example.com: ${value}`);
  return url.origin;
}

/** An RFC 9110 quoted-string: `\` and `"` escaped, anything unprintable as a space. */
function quoted(value: string): string {
  return value.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, ' ');
}
