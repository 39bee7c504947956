import type { IncomingHttpHeaders } from 'node:http';
import { credentialHeaders, peerJson, QUICK_HEADERS_TIMEOUT_MS } from './forward.js';
import type { Peers } from './peers.js';

/** A listing spans instances within this long; a slower peer is reported unavailable instead of holding the answer. */
const LIST_TIMEOUT_MS = 3_000;

export interface PeerListing {
  items: unknown[];
  /** Peers that did not answer (down, slow, or refusing the caller's key): their items are missing from the list. */
  unavailable: string[];
}

export interface PeerListCall {
  peers: Peers;
  /** The list's route, e.g. /v1/sessions; each peer is asked for its own items (?local=true). */
  path: string;
  /** The field of `data` holding the list. */
  field: string;
  headers: IncomingHttpHeaders;
  signal?: AbortSignal;
}

/** The caller's items of a list on every peer (sessions), asked in parallel with the caller's own credentials. */
export async function listOnPeers({ peers, path, field, headers, signal }: PeerListCall): Promise<PeerListing> {
  const listing: PeerListing = { items: [], unavailable: [] };
  const answers = await Promise.all(
    peers.list().map(async (peer) => {
      try {
        const { status, json } = await peerJson({
          peer,
          self: peers.self,
          method: 'GET',
          path: `${path}?local=true`,
          headers: credentialHeaders(headers),
          signal,
          headersTimeoutMs: Math.min(LIST_TIMEOUT_MS, QUICK_HEADERS_TIMEOUT_MS),
        });
        const items = (json as { data?: Record<string, unknown> }).data?.[field];
        return { peer, items: status === 200 && Array.isArray(items) ? items : undefined };
      } catch {
        return { peer, items: undefined };
      }
    }),
  );
  for (const { peer, items } of answers) {
    if (items) listing.items.push(...items);
    else listing.unavailable.push(peer.id);
  }
  return listing;
}
