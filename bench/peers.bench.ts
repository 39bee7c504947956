/**
 * Forwarding benchmark: the same session on instance B called directly at B ("local") and through instance A
 * ("forwarded"), interleaved with the order alternating each round; the difference of medians is what a forwarded
 * call adds. Both instances run in this process on loopback (so their work shares one event loop).
 */
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { Peers } from '../src/http/peers.js';
import { serveHttp, type HttpServer } from '../src/http/server.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { median, percentile, printTable } from './table.js';

const NOOP_ROUNDS = Number(process.env.BENCH_NOOP_ROUNDS ?? 300);
const NAVIGATE_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const WARMUP = 5;
const KEY = 'bench-key';

async function call(base: string, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-svc-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`benchmark call failed: ${method} ${path}: ${text}`);
}

async function instance(id: string): Promise<{ http: HttpServer; peers: Peers; service: BrowserService }> {
  const peers = new Peers(id);
  const service = new BrowserService({ logger: silentLogger(), env: {}, egressPolicy: 'all', instanceId: id });
  const http = await serveHttp(service, { port: 0, host: '127.0.0.1', apiKeys: [KEY], allowedHosts: [], peers });
  return { http, peers, service };
}

/** Runs `local` and `forwarded` alternately; returns the latencies of each in ms. */
async function paired(rounds: number, local: () => Promise<void>, forwarded: () => Promise<void>) {
  const times = { local: [] as number[], forwarded: [] as number[] };
  for (let i = 0; i < WARMUP + rounds; i++) {
    const order = i % 2 ? (['local', 'forwarded'] as const) : (['forwarded', 'local'] as const);
    for (const which of order) {
      const t0 = performance.now();
      await (which === 'local' ? local() : forwarded());
      if (i >= WARMUP) times[which].push(performance.now() - t0);
    }
  }
  return times;
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const [a, b] = await Promise.all([instance('a'), instance('b')]);
  a.peers.set({ id: 'b', url: b.http.url });
  try {
    const start = await fetch(`${b.http.url}/v1/sessions/start`, { method: 'POST', headers: { 'x-svc-api-key': KEY } });
    const id = ((await start.json()) as { data: { id: string } }).data.id;
    const rows: Array<Array<string | number>> = [];
    const measure = async (name: string, rounds: number, run: (base: string) => Promise<void>) => {
      const times = await paired(
        rounds,
        () => run(b.http.url),
        () => run(a.http.url),
      );
      const [local, forwarded] = [median(times.local), median(times.forwarded)];
      rows.push([name, rounds, local, percentile(times.local, 90), forwarded, percentile(times.forwarded, 90), forwarded - local]);
    };
    await measure('GET session (no browser work)', NOOP_ROUNDS, (base) => call(base, 'GET', `/v1/sessions/${id}`));
    let n = 0;
    await measure('navigate', NAVIGATE_ROUNDS, (base) =>
      call(base, 'POST', `/v1/sessions/${id}/navigate`, { url: site.url(n++ % 2 ? '/page2.html' : '/index.html') }),
    );
    printTable(
      'A forwarded REST call vs the same call at the instance holding the session (loopback, ms; target: overhead under 3 ms median)',
      ['call', 'rounds', 'local median', 'local p90', 'forwarded median', 'forwarded p90', 'overhead (median)'],
      rows,
    );
  } finally {
    await a.http.close();
    await b.http.close();
    await Promise.all([a.service.close(), b.service.close()]);
    await site.close();
  }
}
