import { sessionInstance } from '../core/sessions.js';

/** Set on every request one instance sends another; an instance never forwards a request that carries it, so no loops. */
export const FORWARDED_HEADER = 'x-bsm-forwarded-by';

/** Instance ids: short, URL- and DNS-label-safe, and without a dot (the dot ends the id inside a session id). */
export const INSTANCE_ID_PATTERN = /^[A-Za-z0-9_-]{1,63}$/;

export interface Peer {
  id: string;
  /** Base URL, e.g. http://10.0.0.7:8931 */
  url: string;
}

/** Where a session id says its session lives. */
export type SessionRoute = { kind: 'local' } | { kind: 'peer'; peer: Peer };

/**
 * This instance and the peers it may route to. Only the peers in this table are ever contacted: a session id that
 * names any other instance is answered locally, which means session_not_found.
 */
export class Peers {
  private readonly byId = new Map<string, string>();

  constructor(
    readonly self: string,
    peers: Peer[] = [],
  ) {
    if (!INSTANCE_ID_PATTERN.test(self)) throw new Error(`Invalid instance id "${self}": use 1-63 letters, digits, "-" or "_".`);
    for (const peer of peers) this.set(peer);
  }

  set(peer: Peer): void {
    if (!INSTANCE_ID_PATTERN.test(peer.id)) throw new Error(`Invalid peer id "${peer.id}": use 1-63 letters, digits, "-" or "_".`);
    if (peer.id === this.self) throw new Error(`Peer "${peer.id}" has this instance's own id.`);
    this.byId.set(peer.id, normalizeBaseUrl(peer.url));
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  get(id: string): Peer | undefined {
    const url = this.byId.get(id);
    return url === undefined ? undefined : { id, url };
  }

  list(): Peer[] {
    return [...this.byId].map(([id, url]) => ({ id, url }));
  }

  /** A peer's session goes to that peer; everything else (ours, untagged, unknown instance) is handled here. */
  route(sessionId: string): SessionRoute {
    const instance = sessionInstance(sessionId);
    if (instance === undefined || instance === this.self) return { kind: 'local' };
    const peer = this.get(instance);
    return peer ? { kind: 'peer', peer } : { kind: 'local' };
  }
}

/** Parses `ID=URL` as given to --peer. */
export function parsePeerFlag(value: string): Peer {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new Error(`Expected ID=URL, e.g. b=http://10.0.0.8:8931, got "${value}".`);
  const peer = { id: value.slice(0, eq), url: value.slice(eq + 1) };
  normalizeBaseUrl(peer.url);
  return peer;
}

function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`Invalid peer URL "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`Peer URL "${value}" must be http: or https:.`);
  if (url.username || url.password || url.search || url.hash) throw new Error(`Peer URL "${value}" must be a plain base URL.`);
  return url.origin + url.pathname.replace(/\/+$/, '');
}
