import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import { peerJson } from './forward.js';
import type { Peers } from './peers.js';

const REFRESH_MS = 10_000;
const HEALTH_TIMEOUT_MS = 2_000;

export interface DnsPeersOptions {
  /** A name whose A/AAAA records are the instances, e.g. a Kubernetes headless Service. */
  name: string;
  /** The port the instances listen on. */
  port: number;
  logger: Logger;
  refreshMs?: number;
}

/**
 * Keeps `peers` equal to the instances behind a DNS name: every address is asked for its instance id at its
 * unauthenticated /healthz, and only addresses the name resolves to are ever added. Returns a stop function.
 */
export function watchDnsPeers(peers: Peers, options: DnsPeersOptions): () => void {
  let stopped = false;
  const refresh = async () => {
    let addresses: string[];
    try {
      addresses = (await lookup(options.name, { all: true })).map((entry) => (entry.family === 6 ? `[${entry.address}]` : entry.address));
    } catch (err) {
      options.logger.warn({ name: options.name, err: (err as Error).message }, 'peer DNS lookup failed; keeping the peers known');
      return;
    }
    const found = new Map<string, string>();
    await Promise.all(
      addresses.map(async (address) => {
        const url = `http://${address}:${options.port}`;
        const id = await instanceIdAt(url, peers.self);
        if (id && id !== peers.self) found.set(id, url);
      }),
    );
    if (stopped) return;
    for (const [id, url] of found) {
      if (peers.get(id)?.url !== url) options.logger.info({ peer: id, url }, 'peer found through DNS');
      peers.set({ id, url });
    }
    // A peer that stopped answering keeps its entry: its sessions then answer session_unavailable, not not-found.
  };
  void refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs ?? REFRESH_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

async function instanceIdAt(url: string, self: string): Promise<string | undefined> {
  try {
    const { status, json } = await peerJson({
      peer: { id: url, url },
      self,
      method: 'GET',
      path: '/healthz',
      headers: {},
      headersTimeoutMs: HEALTH_TIMEOUT_MS,
    });
    // A full instance answers 503 with the same readiness data in error.details; its sessions still live there.
    const body = json as { data?: { instanceId?: unknown }; error?: { details?: { instanceId?: unknown } } };
    const id = status === 200 ? body.data?.instanceId : status === 503 ? body.error?.details?.instanceId : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Parses NAME or NAME:PORT as given to --peers-from-dns; the port defaults to this server's. */
export function parseDnsFlag(value: string, defaultPort: number): { name: string; port: number } {
  const match = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) throw new Error(`Expected a DNS name, optionally with :PORT, got "${value}".`);
  return { name: match[1]!, port: match[2] ? Number(match[2]) : defaultPort };
}
