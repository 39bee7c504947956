import type { IncomingHttpHeaders } from 'node:http';
import type { SessionInfo } from '../core/sessions.js';
import { credentialHeaders, peerJson, QUICK_HEADERS_TIMEOUT_MS } from './forward.js';
import type { Peers } from './peers.js';

/** A listing spans instances within this long; a slower peer is reported unavailable instead of holding the answer. */
const LIST_TIMEOUT_MS = 3_000;

export interface PeerListing {
  sessions: SessionInfo[];
  /** Peers that did not answer (down, slow, or refusing the caller's key): their sessions are missing from the list. */
  unavailable: string[];
}

/** The caller's sessions on every peer, asked in parallel with the caller's own credentials. */
export async function listPeerSessions(peers: Peers, headers: IncomingHttpHeaders, signal?: AbortSignal): Promise<PeerListing> {
  const listing: PeerListing = { sessions: [], unavailable: [] };
  const answers = await Promise.all(
    peers.list().map(async (peer) => {
      try {
        const { status, json } = await peerJson({
          peer,
          self: peers.self,
          method: 'GET',
          path: '/v1/sessions?local=true',
          headers: credentialHeaders(headers),
          signal,
          headersTimeoutMs: Math.min(LIST_TIMEOUT_MS, QUICK_HEADERS_TIMEOUT_MS),
        });
        const sessions = (json as { data?: { sessions?: unknown } }).data?.sessions;
        return { peer, sessions: status === 200 && Array.isArray(sessions) ? (sessions as SessionInfo[]) : undefined };
      } catch {
        return { peer, sessions: undefined };
      }
    }),
  );
  for (const { peer, sessions } of answers) {
    if (sessions) listing.sessions.push(...sessions);
    else listing.unavailable.push(peer.id);
  }
  return listing;
}
