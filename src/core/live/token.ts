import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';

/** What a live-view token grants: one session of one owner, watching or also driving, until it expires. */
export interface LiveClaims {
  sessionId: string;
  owner: string;
  interactive: boolean;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** `<payload>.<mac>`, each base64url without padding. */
const CANONICAL = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export const LIVE_TOKEN_DEFAULT_TTL_MS = 15 * 60_000;
export const LIVE_TOKEN_MAX_TTL_MS = 12 * 60 * 60_000;

/**
 * Signs and checks live-view tokens: `<payload>.<mac>`, both base64url, the MAC an HMAC-SHA256 of the payload under the
 * server's secret. The token is the page's only credential, so it carries no API key; errors never echo it.
 */
export class LiveTokens {
  private readonly secret: Buffer;

  /** `secret` from --live-view-secret (tokens survive a restart and work on every instance sharing it), else a random one. */
  constructor(secret?: string) {
    this.secret = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  issue(claims: LiveClaims): string {
    const payload = Buffer.from(
      JSON.stringify({ s: claims.sessionId, o: claims.owner, i: claims.interactive, e: claims.expiresAt }),
      'utf8',
    ).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /**
   * The claims of a token for `sessionId`: `unauthorized` (401) when it is missing, forged or expired, `forbidden` (403)
   * when it is valid but for another session.
   */
  verify(token: string | null | undefined, sessionId: string, now = Date.now()): LiveClaims {
    const claims = this.read(token);
    if (!claims) throw new ServiceError('unauthorized', 'This live-view link is not valid. Ask for a new one (liveView).');
    if (claims.expiresAt <= now) throw new ServiceError('unauthorized', 'This live-view link has expired. Ask for a new one (liveView).');
    if (claims.sessionId !== sessionId) throw new ServiceError('forbidden', 'This live-view link is for another session.');
    return claims;
  }

  /** Only the form `issue` writes is read: base64url without padding, one dot (Node's decoder would take many others). */
  private read(token: string | null | undefined): LiveClaims | undefined {
    if (!token || token.length > 2_048 || !CANONICAL.test(token)) return undefined;
    const dot = token.indexOf('.');
    const payload = token.slice(0, dot);
    // The MAC compared as the text `issue` writes, so other encodings of the same bytes are refused too.
    const presented = Buffer.from(token.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.mac(payload).toString('base64url'), 'utf8');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
    try {
      const raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      if (typeof raw.s !== 'string' || typeof raw.o !== 'string' || typeof raw.i !== 'boolean' || typeof raw.e !== 'number')
        return undefined;
      return { sessionId: raw.s, owner: raw.o, interactive: raw.i, expiresAt: raw.e };
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(`live-view:${payload}`).digest();
  }
}
