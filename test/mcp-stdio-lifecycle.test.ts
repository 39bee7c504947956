import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, ROOT, startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { browserProcessOf, chromiumUnder, isAlive, renderersUnder, waitFor } from './fixtures/processes.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

/** Servers with their own flags, one per test; each test ends its server, afterEach catches failures. */
describe('MCP stdio server lifecycle and limits', () => {
  let site: SiteServer;
  let server: StdioServer | undefined;

  const id = (result: { structuredContent?: unknown }) => (result.structuredContent as { id: string }).id;
  const navigateOk = async (sessionId: string, url: string) => {
    const result = await server!.call('navigate', { sessionId, url });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent as { status: number | null };
  };

  beforeAll(async () => {
    site = await startSiteServer();
  });
  afterEach(async () => {
    await server?.close().catch(() => undefined);
    server = undefined;
  });
  afterAll(async () => {
    await site?.close();
  });

  it('an idle session expires after --session-idle-timeout and its context is freed', async () => {
    server = await startStdioServer(['--session-idle-timeout', '800']);
    const sessionId = id(await server.call('session_start'));
    await navigateOk(sessionId, site.url('/index.html'));
    const withSession = renderersUnder(server.pid!).length;
    expect(withSession).toBeGreaterThan(0);
    const expired = await waitFor(async () => {
      const listed = (await server!.call('session_list')).structuredContent as { sessions: Array<{ id: string }> };
      return !listed.sessions.some((session) => session.id === sessionId);
    }, 5_000);
    expect(expired).toBe(true);
    expect(errorCode(await server.call('navigate', { sessionId, url: site.url('/index.html') }))).toBe('session_not_found');
    expect(await waitFor(() => renderersUnder(server!.pid!).length < withSession, 30_000)).toBe(true);
  });

  it('a session in use does not expire while it keeps being used', async () => {
    server = await startStdioServer(['--session-idle-timeout', '3000']);
    const sessionId = id(await server.call('session_start'));
    for (let i = 0; i < 4; i++) {
      await navigateOk(sessionId, site.url(`/index.html?keepalive=${i}`));
      // Idle time passing between uses is the behaviour under test: four 1 s gaps outlast the 3 s idle timeout, and each
      // leaves 2 s for the next call to reach a loaded server (400 ms gaps against 1 s failed under CI load).
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    expect((await server.call('session_end', { sessionId })).isError).toBeFalsy();
  });

  it('--max-sessions refuses one session too many with session_limit until one ends', async () => {
    server = await startStdioServer(['--max-sessions', '2']);
    const a = id(await server.call('session_start'));
    await server.call('session_start');
    const third = await server.call('session_start');
    expect(errorCode(third)).toBe('session_limit');
    await server.call('session_end', { sessionId: a });
    expect((await server.call('session_start')).isError).toBeFalsy();
  });

  it('--max-sessions holds when many session_start calls arrive at once', async () => {
    server = await startStdioServer(['--max-sessions', '3']);
    const results = await Promise.all(Array.from({ length: 6 }, () => server!.call('session_start')));
    expect(results.filter((result) => !result.isError)).toHaveLength(3);
    expect(results.filter((result) => errorCode(result) === 'session_limit')).toHaveLength(3);
  });

  it('--allow-file-urls lets navigate open file: and data: URLs', async () => {
    server = await startStdioServer(['--allow-file-urls']);
    const sessionId = id(await server.call('session_start'));
    const fileUrl = pathToFileURL(`${ROOT}test/sites/index.html`).href;
    const result = await server.call('navigate', { sessionId, url: fileUrl });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const data = await server.call('navigate', { sessionId, url: 'data:text/html,<h1>inline</h1>' });
    expect(data.isError, JSON.stringify(data.content)).toBeFalsy();
  });

  it('when the browser process dies its sessions answer browser_unavailable, are listed as lost, and the next session_start relaunches it', async () => {
    server = await startStdioServer();
    const sessionId = id(await server.call('session_start'));
    await navigateOk(sessionId, site.url('/index.html'));
    const browser = browserProcessOf(server.pid!);
    expect(browser).toBeDefined();
    process.kill(browser!.pid, 'SIGKILL');
    expect(await waitFor(() => !isAlive(browser!.pid), 5_000)).toBe(true);

    const after = await server.call('navigate', { sessionId, url: site.url('/page2.html') });
    expect(errorCode(after)).toBe('browser_unavailable');
    expect((after._meta?.error as { message: string }).message).toMatch(/browser host local was lost/i);
    const listed = (await server.call('session_list')).structuredContent as {
      sessions: Array<{ id: string; host: string; state: string }>;
    };
    expect(listed.sessions).toEqual([expect.objectContaining({ id: sessionId, host: 'local', state: 'lost' })]);

    const fresh = await server.call('session_start');
    expect(fresh.isError, JSON.stringify(fresh.content)).toBeFalsy();
    expect((await navigateOk(id(fresh), site.url('/page2.html')))?.status).toBe(200);
    const relaunched = browserProcessOf(server.pid!);
    expect(relaunched?.pid).not.toBe(browser!.pid);
  });

  for (const how of ['SIGTERM', 'SIGKILL', 'stdin close'] as const) {
    it(`killing the server (${how}) mid-navigation leaves no Chromium process behind`, async () => {
      server = await startStdioServer();
      const started = await Promise.all([server.call('session_start'), server.call('session_start')]);
      await Promise.all(started.map((result) => navigateOk(id(result), site.url('/frames.html'))));
      const serverPid = server.pid!;
      // One navigation still in flight when the server goes: shutdown must not wait for it.
      void server
        .call('navigate', { sessionId: id(started[0]!), url: site.url('/hang'), options: { timeout: 60_000 } })
        .catch(() => undefined);
      expect(await waitFor(() => site.requests.some((request) => request.url === '/hang'), 5_000)).toBe(true);
      const chromium = chromiumUnder(serverPid);
      expect(chromium.length).toBeGreaterThan(2);

      if (how === 'stdin close') server.endStdin();
      else process.kill(serverPid, how);
      expect(await waitFor(() => !isAlive(serverPid), 15_000), 'server exits').toBe(true);
      const gone = await waitFor(() => chromium.every((entry) => !isAlive(entry.pid)), 15_000);
      expect(
        gone,
        `left behind: ${chromium
          .filter((entry) => isAlive(entry.pid))
          .map((entry) => entry.args.slice(0, 80))
          .join('\n')}`,
      ).toBe(true);
    });
  }
});
