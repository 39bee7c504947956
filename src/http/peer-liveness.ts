import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Peer } from './peers.js';

/** While a call to a peer is in flight, the peer is asked this often whether it still answers at all. */
export const LIVENESS_INTERVAL_MS = 2_000;
/** A peer that does not answer its health check within this long is frozen or gone: its calls fail at once. */
export const LIVENESS_TIMEOUT_MS = 5_000;

type OnDown = (why: string) => void;

const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 4 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 4 }) };

/**
 * One watcher per peer with calls in flight, shared by all of them. An operation may rightly take minutes (a JSON
 * answer only starts when it ends), so the wait for the answer has no deadline of its own; instead the peer is asked
 * GET /healthz every LIVENESS_INTERVAL_MS, and one that answers nothing (any status counts) within LIVENESS_TIMEOUT_MS,
 * say a stopped process or a vanished host whose connections stay open, fails every call waiting on it.
 */
class PeerWatcher {
  readonly listeners = new Set<OnDown>();
  private readonly timer: NodeJS.Timeout;
  private probing = false;

  constructor(
    private readonly peer: Peer,
    private readonly onIdle: () => void,
  ) {
    this.timer = setInterval(() => this.probe(), LIVENESS_INTERVAL_MS);
    this.timer.unref();
  }

  remove(listener: OnDown): void {
    this.listeners.delete(listener);
    if (this.listeners.size === 0) {
      clearInterval(this.timer);
      this.onIdle();
    }
  }

  private probe(): void {
    if (this.probing) return;
    this.probing = true;
    const url = new URL(`${this.peer.url}/healthz`);
    const https = url.protocol === 'https:';
    let done = false;
    const finish = (down?: string) => {
      if (done) return;
      done = true;
      this.probing = false;
      clearTimeout(timeout);
      if (down === undefined) return;
      for (const listener of [...this.listeners]) listener(down);
    };
    const req = (https ? httpsRequest : httpRequest)(url, { method: 'GET', agent: https ? agents.https : agents.http }, (res) => {
      res.resume();
      finish();
    });
    const timeout = setTimeout(() => {
      req.destroy();
      finish(`no answer to a health check within ${LIVENESS_TIMEOUT_MS} ms`);
    }, LIVENESS_TIMEOUT_MS);
    req.on('error', (err: NodeJS.ErrnoException) => finish(`health check failed: ${err.code ?? err.message}`));
    req.end();
  }
}

const watchers = new Map<string, PeerWatcher>();

/** Calls `onDown` if the peer stops answering while the watch lasts; returns the function that ends the watch. */
export function watchPeer(peer: Peer, onDown: OnDown): () => void {
  let watcher = watchers.get(peer.url);
  if (!watcher) {
    const created: PeerWatcher = new PeerWatcher(peer, () => {
      if (watchers.get(peer.url) === created) watchers.delete(peer.url);
    });
    watchers.set(peer.url, created);
    watcher = created;
  }
  const own = watcher;
  let active = true;
  const listener: OnDown = (why) => {
    if (!active) return;
    active = false;
    own.remove(listener);
    onDown(why);
  };
  own.listeners.add(listener);
  return () => {
    if (!active) return;
    active = false;
    own.remove(listener);
  };
}
