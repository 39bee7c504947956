/**
 * Live view: input-to-frame latency (a click in the viewer -> the first frame showing it), frames and bytes per second
 * to one viewer on an animating page, and this process's CPU and memory with 0, 1 and 5 viewers on one session.
 * Viewers are WebSocket clients speaking the page's protocol; the browser is local Chromium.
 */
import { loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { LOCAL_OWNER } from '../src/door.js';
import { serveHttp } from '../src/http/server.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { printTable } from './table.js';

const CLICKS = 20;
const WINDOW_MS = 5_000;

interface Viewer {
  ws: WebSocket;
  frames: number;
  bytes: number;
  control: string;
  onFrame?: () => void;
}

function connect(pageUrl: string): Promise<Viewer> {
  const url = new URL(pageUrl);
  url.protocol = 'ws:';
  url.pathname += '/ws';
  const viewer: Viewer = { ws: new WebSocket(url), frames: 0, bytes: 0, control: 'none' };
  viewer.ws.on('message', (data, isBinary) => {
    if (isBinary) {
      viewer.frames++;
      viewer.bytes += (data as Buffer).length;
      viewer.onFrame?.();
    } else {
      const message = JSON.parse(data.toString()) as { type: string; control?: string };
      if (message.type === 'status') viewer.control = message.control!;
    }
  });
  return new Promise((resolve, reject) => {
    viewer.ws.once('open', () => resolve(viewer));
    viewer.ws.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const service = new BrowserService({ logger: silentLogger(), egressPolicy: 'all' });
  const http = await serveHttp(service, { port: 0, host: '127.0.0.1', apiKeys: [], allowedHosts: [] });
  try {
    const info = await service.startSession(LOCAL_OWNER);
    const session = service.sessions.get(info.id, LOCAL_OWNER);

    // Latency: a still page that flips its background on mousedown, so the next frame is the click's.
    await session.page.goto(site.url('/live/static.html'));
    const link = await service.liveView(LOCAL_OWNER, info.id, { interactive: true });
    const viewer = await connect(link.url);
    await until(() => viewer.frames > 0);
    viewer.ws.send(JSON.stringify({ type: 'takeover' }));
    await until(() => viewer.control === 'person');
    const latencies: number[] = [];
    for (let i = 0; i < CLICKS; i++) {
      await sleep(150);
      const started = performance.now();
      const shown = new Promise<void>((resolve) => (viewer.onFrame = resolve));
      viewer.ws.send(JSON.stringify({ type: 'mouse', action: 'down', x: 0.5, y: 0.5 }));
      viewer.ws.send(JSON.stringify({ type: 'mouse', action: 'up', x: 0.5, y: 0.5 }));
      await shown;
      latencies.push(performance.now() - started);
      viewer.onFrame = undefined;
    }
    viewer.ws.send(JSON.stringify({ type: 'done' }));
    await until(() => viewer.control === 'none');
    viewer.ws.close();
    printTable(
      `Live view input-to-frame latency, local Chromium (${CLICKS} clicks; load average ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')})`,
      ['Median ms', 'p95 ms', 'Min ms', 'Max ms'],
      [[percentile(latencies, 50), percentile(latencies, 95), Math.min(...latencies), Math.max(...latencies)]],
    );

    // Frames, bytes and server cost on an animating page with 0, 1 and 5 viewers.
    await session.page.goto(site.url('/live/animate.html'));
    const rows: Array<Array<string | number>> = [];
    for (const count of [0, 1, 5]) {
      const link5 = await service.liveView(LOCAL_OWNER, info.id, { interactive: false });
      const viewers = await Promise.all(Array.from({ length: count }, () => connect(link5.url)));
      if (count) await until(() => viewers.every((one) => one.frames > 0));
      await sleep(500);
      for (const one of viewers) {
        one.frames = 0;
        one.bytes = 0;
      }
      const cpu = process.cpuUsage();
      const started = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const first = viewers[0];
      rows.push([
        count,
        first ? first.frames / seconds : 0,
        first ? Math.round(first.bytes / seconds / 1024) : 0,
        ((used.user + used.system) / 1000 / (seconds * 1000)) * 100,
        Math.round(process.memoryUsage().rss / 1024 / 1024),
        service.live.stats().hubs,
      ]);
      for (const one of viewers) one.ws.close();
      await until(() => service.live.stats().viewers === 0);
    }
    printTable(
      `Live view on an animating page, ${WINDOW_MS / 1000} s each (server process only; load average ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')})`,
      ['Viewers', 'Frames/s (one viewer)', 'KiB/s (one viewer)', 'Server CPU %', 'Server RSS MiB', 'Hubs'],
      rows,
    );
  } finally {
    await http.close();
    await service.close();
    await site.close();
  }
}
