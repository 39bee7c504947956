/**
 * Session options: the corpus pages (../shared/corpus; skipped without them) loaded by a session with blockResources
 * ["image", "media", "font"] and by one without, alternately, page by page: load time (navigate until `load`), bytes
 * and requests the server sent. The corpus saved no assets (its pages point at the live web), so this bench serves
 * each page with its absolute asset URLs moved to its own origin and answers them with fixed-size bodies: images
 * 30 KB, fonts 40 KB, media 200 KB, scripts 20 KB, stylesheets 10 KB (each stylesheet declares a web font for the
 * body; the last one's wins, so a page with stylesheets loads one font). Two passes: loopback as it is, then with each
 * asset answered after ASSET_LATENCY_MS (a CDN round trip on an ordinary connection), which is where a page spends its
 * time on a real network. All assets come from one origin over HTTP/1.1 (six connections): fewer requests queue for
 * them when some are blocked, so if anything this favours blocking over the real web's many hosts.
 * A load that reaches the 15 s timeout is marked and counted: a few of those would swamp the totals.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { CORPUS_DIR, corpusHere } from './corpus.js';
import { median, printTable } from './table.js';

const KB = 1024;
const SIZES: Array<[RegExp, string, number]> = [
  [/\.(jpe?g|png|gif|webp|avif|svg|ico)$/i, 'image/png', 30 * KB],
  [/\.(woff2?|ttf|otf|eot)$/i, 'font/woff2', 40 * KB],
  [/\.(mp4|webm|mp3|ogg|m4a|mov)$/i, 'video/mp4', 200 * KB],
  [/\.js$/i, 'text/javascript', 20 * KB],
  [/\.css$/i, 'text/css', 10 * KB],
];
let fontSerial = 0;
/** The added wait per asset response of the second pass, ms. */
const ASSET_LATENCY_MS = Number(process.env.BENCH_ASSET_LATENCY_MS ?? 40);
const LOAD_TIMEOUT_MS = 15_000;

/** A body of `size` bytes of the asset's type; unknown extensions are treated as images (most are, on these pages). */
function asset(path: string): { type: string; body: Buffer } {
  const [, type, size] = SIZES.find(([pattern]) => pattern.test(path)) ?? SIZES[0]!;
  if (type === 'text/css') {
    const font = `@font-face{font-family:F${++fontSerial};src:url(/ext/fonts.example/f${fontSerial}.woff2)}body{font-family:F${fontSerial},serif}`;
    return { type, body: Buffer.from(font + `/*${'x'.repeat(size - font.length - 4)}*/`) };
  }
  if (type === 'text/javascript') return { type, body: Buffer.from(`void 0;/*${'x'.repeat(size - 11)}*/`) };
  return { type, body: Buffer.alloc(size, 7) };
}

/** Absolute http(s) URLs in attributes, srcsets, url() and scripts, moved to /ext/<host>/<path> on the page's origin. */
function localise(html: string): string {
  return html.replace(/(["'(\s,=])(?:https?:)?\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)+\/[^"'\s)<>]*)/gi, '$1/ext/$2');
}

interface Counter {
  bytes: number;
  requests: number;
}

async function serve(latencyMs: number): Promise<{ origin: string; counter: Counter; close(): void }> {
  const counter: Counter = { bytes: 0, requests: 0 };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    counter.requests++;
    const send = (type: string, body: Buffer | string) => {
      counter.bytes += Buffer.byteLength(body);
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    };
    if (path.startsWith('/ext/')) {
      const { type, body } = asset(path.split('?')[0]!);
      if (!latencyMs) return send(type, body);
      return void setTimeout(() => send(type, body), latencyMs);
    }
    const file = join(CORPUS_DIR, path);
    if (!file.startsWith(CORPUS_DIR) || !file.endsWith('/index.html') || !existsSync(file)) return void res.writeHead(404).end();
    send('text/html; charset=utf-8', localise(readFileSync(file, 'utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counter,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

interface Load {
  ms: number;
  timedOut: boolean;
  bytes: number;
  requests: number;
}

function shownMs(load: Load): string | number {
  return load.timedOut ? `${Math.round(load.ms)} (timed out)` : Math.round(load.ms);
}

async function load(session: BrowserSession, url: string, counter: Counter): Promise<Load> {
  const bytes = counter.bytes;
  const requests = counter.requests;
  const started = performance.now();
  let timedOut = false;
  await session.page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS }).catch((err: { code?: string }) => {
    timedOut = err.code === 'navigation_timeout';
  });
  const ms = performance.now() - started;
  // Move off the page so nothing it still loads is counted for the next one.
  await session.page.goto('about:blank').catch(() => undefined);
  return { ms, timedOut, bytes: counter.bytes - bytes, requests: counter.requests - requests };
}

export async function run(): Promise<void> {
  if (!corpusHere('options', 'skipped')) return;
  const pages = readdirSync(CORPUS_DIR).filter((name) => existsSync(join(CORPUS_DIR, name, 'index.html')));
  for (const latencyMs of [0, ASSET_LATENCY_MS]) await pass(pages, latencyMs);
}

async function pass(pages: string[], latencyMs: number): Promise<void> {
  const site = await serve(latencyMs);
  const lib = new BrowserSessions({ logger: silentLogger(), egressPolicy: 'all' });
  const network = latencyMs ? `each asset answered after ${latencyMs} ms` : 'loopback, no added latency';
  try {
    const plain = await lib.startSession();
    const blocking = await lib.startSession({ blockResources: ['image', 'media', 'font'] });
    const rows: Array<{ page: string; plain: Load; blocked: Load }> = [];
    for (const [i, page] of pages.entries()) {
      const url = `${site.origin}/${page}/index.html`;
      // Alternate which session goes first, so neither always meets a warmer browser.
      const first = i % 2 === 0;
      const a = await load(first ? plain : blocking, url, site.counter);
      const b = await load(first ? blocking : plain, url, site.counter);
      rows.push({ page, plain: first ? a : b, blocked: first ? b : a });
    }
    const blockedTotal = blocking.info().blockedRequests ?? 0;
    printTable(
      `Corpus pages with and without blockResources ["image","media","font"], ${network} (load = navigate until the load event; bytes and requests as served)`,
      ['Page', 'Load ms', 'Load ms blocked', 'KB', 'KB blocked', 'Requests', 'Requests blocked'],
      rows.map((row) => [
        row.page,
        shownMs(row.plain),
        shownMs(row.blocked),
        Math.round(row.plain.bytes / KB),
        Math.round(row.blocked.bytes / KB),
        row.plain.requests,
        row.blocked.requests,
      ]),
    );
    const sum = (pick: (row: (typeof rows)[number]) => number) => rows.reduce((total, row) => total + pick(row), 0);
    const faster = rows.filter((row) => row.blocked.ms < row.plain.ms).length;
    // Paired by page, so one slow page (or a burst of load on the machine) moves it less than the totals.
    const ratio = median(rows.map((row) => row.blocked.ms / row.plain.ms));
    printTable(
      `Summary over ${rows.length} pages, ${network} (${blockedTotal} requests blocked)`,
      ['Session', 'Median load ms', 'Total load ms', 'Timed out', 'Total KB', 'Requests'],
      [
        [
          'no options',
          Math.round(median(rows.map((row) => row.plain.ms))),
          Math.round(sum((row) => row.plain.ms)),
          sum((row) => Number(row.plain.timedOut)),
          Math.round(sum((row) => row.plain.bytes) / KB),
          sum((row) => row.plain.requests),
        ],
        [
          `blockResources image, media, font (faster on ${faster}/${rows.length}, median per-page time ${ratio.toFixed(2)}x)`,
          Math.round(median(rows.map((row) => row.blocked.ms))),
          Math.round(sum((row) => row.blocked.ms)),
          sum((row) => Number(row.blocked.timedOut)),
          Math.round(sum((row) => row.blocked.bytes) / KB),
          sum((row) => row.blocked.requests),
        ],
      ],
    );
  } finally {
    await lib.close();
    site.close();
  }
}
