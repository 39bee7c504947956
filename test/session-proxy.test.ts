import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { closedPort } from './fixtures/browser-hosts.js';
import { capturingLogger } from './fixtures/capturing-logger.js';
import { startOptionsSite, type OptionsSite } from './fixtures/options-site.js';
import { rejection } from './fixtures/rejection.js';

interface SeenRequest {
  kind: 'http' | 'connect';
  target: string;
  auth: string | undefined;
}

interface ForwardProxy {
  url: string;
  port: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** A forward proxy on loopback (absolute-form HTTP and CONNECT), optionally asking for Basic credentials. */
async function startForwardProxy(credentials?: { username: string; password: string }): Promise<ForwardProxy> {
  const expected = credentials ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` : undefined;
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const auth = req.headers['proxy-authorization'];
    seen.push({ kind: 'http', target: req.url ?? '', auth });
    if (expected && auth !== expected) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const out = httpRequest({
      host: target.hostname,
      port: target.port,
      path: target.pathname + target.search,
      method: req.method,
      headers,
    });
    out.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('connect', (req, socket: Socket) => {
    const auth = req.headers['proxy-authorization'];
    seen.push({ kind: 'connect', target: req.url ?? '', auth });
    if (expected && auth !== expected)
      return void socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
    const [host, port] = [(req.url ?? '').replace(/:\d+$/, ''), Number(/:(\d+)$/.exec(req.url ?? '')?.[1])];
    const upstream = connect({ host: host.replace(/^\[|\]$/g, ''), port }, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const PASSWORD = 'pw-Zq81-never-shown';

describe('a session upstream proxy', () => {
  let site: OptionsSite;
  let open: ForwardProxy;
  let locked: ForwardProxy;

  beforeAll(async () => {
    site = await startOptionsSite();
    open = await startForwardProxy();
    locked = await startForwardProxy({ username: 'alice', password: PASSWORD });
  });
  afterAll(async () => {
    await open?.close();
    await locked?.close();
    await site?.close();
  });

  const sitePort = () => new URL(site.origin).port;

  describe('under egress policy public (chained behind the filtering proxy)', () => {
    let lib: BrowserSessions;
    let lines: string[];

    beforeAll(() => {
      const captured = capturingLogger();
      lines = captured.lines;
      lib = new BrowserSessions({
        logger: captured.logger,
        egressPolicy: 'public',
        egressAllow: [`127.0.0.1:${open.port}`, `127.0.0.1:${locked.port}`, `127.0.0.1:${sitePort()}`],
      });
    });
    afterAll(async () => {
      await lib?.close();
    });

    it('blocked resource types under the filtering policy (its proxy asks the browser for credentials): the page still loads, images are blocked', async () => {
      const session = await lib.startSession({ blockResources: ['image'] });
      expect((await session.page.goto(site.url('/images')))?.status).toBe(200);
      expect((await session.page.extract()).pageText).toContain('The end of the gallery.');
      await expect.poll(() => session.info().blockedRequests).toBe(5);
      await session.end();
    });

    it("the upstream sees the session's plain-HTTP requests and its CONNECT tunnels", async () => {
      const session = await lib.startSession({ proxy: { server: open.url } });
      const before = open.seen.length;
      await session.page.goto(site.url('/probe'));
      expect((await session.page.extract()).pageText).toContain('PROBE');
      expect(open.seen.slice(before)).toContainEqual({ kind: 'http', target: site.url('/probe'), auth: undefined });
      await session.page.goto(site.url('/socket-page'));
      await expect
        .poll(() =>
          open.seen
            .slice(before)
            .filter((seen) => seen.kind === 'connect')
            .map((seen) => seen.target),
        )
        .toContain(`127.0.0.1:${sitePort()}`);
      await session.end();
    });

    it('credentials go to the upstream as Proxy-Authorization, and the password shows nowhere', async () => {
      const session = await lib.startSession({ proxy: { server: locked.url, username: 'alice', password: PASSWORD } });
      const before = locked.seen.length;
      const events: unknown[] = [];
      await session.page.goto(site.url('/socket-page'), {}, { onOutcome: (info) => events.push(...info.pageEvents) });
      const basic = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
      expect(locked.seen.slice(before)).toContainEqual({ kind: 'http', target: site.url('/socket-page'), auth: basic });
      await expect.poll(() => locked.seen.slice(before).some((seen) => seen.kind === 'connect' && seen.auth === basic)).toBe(true);
      const info = session.info();
      expect(info.options.proxy).toEqual({ server: locked.url, username: 'alice', password: '***' });
      expect(JSON.stringify(info)).not.toContain(PASSWORD);
      expect(JSON.stringify(events)).not.toContain(PASSWORD);
      await session.end();
      expect(lines.join('\n')).not.toContain(PASSWORD);
    });

    it('wrong credentials: navigate fails with a message naming the upstream, never the password', async () => {
      const session = await lib.startSession({ proxy: { server: locked.url, username: 'alice', password: `${PASSWORD}-wrong` } });
      const err = await rejection(session.page.goto(site.url('/probe')));
      expect(err.code).toBe('navigation_failed');
      expect(err.message).toContain(`127.0.0.1:${locked.port}`);
      expect(err.message).toContain('407');
      expect(err.message).not.toContain(PASSWORD);
      expect(JSON.stringify(session.info())).not.toContain(PASSWORD);
      await session.end();
    });

    it('the egress policy still refuses internal targets: the upstream never sees them', async () => {
      const session = await lib.startSession({ proxy: { server: open.url } });
      const refused = await closedPort();
      const before = open.seen.length;
      const err = await rejection(session.page.goto(`http://127.0.0.1:${refused}/`));
      expect(err.code).toBe('url_not_allowed');
      expect(open.seen.slice(before).filter((seen) => seen.target.includes(`:${refused}`))).toEqual([]);
      await session.end();
    });

    it('an upstream the policy refuses is url_not_allowed naming proxy.server, and no context is left', async () => {
      const contexts = (await lib.service.browser.get()).contexts().length;
      const err = await rejection(lib.startSession({ proxy: { server: `http://127.0.0.1:${await closedPort()}` } }));
      expect(err.code).toBe('url_not_allowed');
      expect(err.message).toContain('proxy.server');
      expect((await lib.service.browser.get()).contexts()).toHaveLength(contexts);
    });
  });

  describe('under egress policy all (the browser uses the upstream directly)', () => {
    let lib: BrowserSessions;

    beforeAll(() => {
      lib = new BrowserSessions({ logger: pino({ level: 'silent' }), egressPolicy: 'all' });
    });
    afterAll(async () => {
      await lib?.close();
    });

    it("the upstream sees the session's requests, with the credentials it asked for", async () => {
      const plain = await lib.startSession({ proxy: { server: open.url } });
      const before = open.seen.length;
      await plain.page.goto(site.url('/probe'));
      expect(open.seen.slice(before).map((seen) => seen.target)).toContain(site.url('/probe'));
      await plain.end();

      const session = await lib.startSession({ proxy: { server: locked.url, username: 'alice', password: PASSWORD } });
      const seenBefore = locked.seen.length;
      await session.page.goto(site.url('/probe'));
      expect((await session.page.extract()).pageText).toContain('PROBE');
      const basic = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
      expect(locked.seen.slice(seenBefore)).toContainEqual({ kind: 'http', target: site.url('/probe'), auth: basic });
      expect(JSON.stringify(session.info())).not.toContain(PASSWORD);
      await session.end();
    });

    it('blocked resource types and URL globs beside the proxy credentials: the page loads through the upstream, blocked requests never reach it', async () => {
      const session = await lib.startSession({
        proxy: { server: locked.url, username: 'alice', password: PASSWORD },
        blockResources: ['image'],
        blockUrls: ['**/style.css'],
      });
      const seenBefore = locked.seen.length;
      await session.page.goto(site.url('/images'));
      expect((await session.page.extract()).pageText).toContain('The end of the gallery.');
      await expect.poll(() => session.info().blockedRequests).toBe(6);
      const targets = locked.seen.slice(seenBefore).map((seen) => seen.target);
      expect(targets).toContain(site.url('/images'));
      expect(targets.filter((target) => target.includes('/img/') || target.includes('/style.css'))).toEqual([]);
      await session.end();
    });
  });
});
