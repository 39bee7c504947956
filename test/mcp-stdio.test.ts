import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { errorCode } from './fixtures/mcp-stdio.js';
import { renderersUnder, waitFor } from './fixtures/processes.js';
import { useSiteStdio } from './fixtures/site-stdio.js';

/** navigate's structuredContent over MCP: where it went; the page text is the text content. */
interface NavOutput {
  url?: string;
  status: number | null;
  title?: string;
  nextCursor?: string;
}
interface FrameInfo {
  frameId: string;
  url: string;
  name: string;
  parentFrameId: string | null;
}
interface SessionInfo {
  id: string;
  mainFrameId: string;
  url: string;
  frames: FrameInfo[];
  recentEvents: Array<{ type: string; message: string; url?: string }>;
}
interface PageEvent {
  type: string;
  message: string;
  url?: string;
}

describe('MCP over stdio', () => {
  const fixture = useSiteStdio();

  const start = async (): Promise<string> => {
    const result = await fixture.server.call('session_start');
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const { id } = result.structuredContent as unknown as SessionInfo;
    // A model reads the id and the idle limit in one line; the rest of the session is in structuredContent.
    expect(result.content).toEqual([{ type: 'text', text: `Started session ${id}; it ends after 15 min without a call.` }]);
    return id;
  };
  const end = (sessionId: string) => fixture.server.call('session_end', { sessionId });
  const navigate = (sessionId: string, url: string, extra: Record<string, unknown> = {}) =>
    fixture.server.call('navigate', { sessionId, url, ...extra });
  const okNav = async (sessionId: string, url: string, extra: Record<string, unknown> = {}): Promise<NavOutput> => {
    const result = await navigate(sessionId, url, extra);
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent as unknown as NavOutput;
  };
  const sessionInfo = async (sessionId: string): Promise<SessionInfo | undefined> => {
    const listed = (await fixture.server.call('session_list')).structuredContent as { sessions: SessionInfo[] };
    return listed.sessions.find((session) => session.id === sessionId);
  };
  const pageEvents = (result: CallToolResult): PageEvent[] => (result._meta?.pageEvents as PageEvent[] | undefined) ?? [];
  /** The newest request the site server saw for a path; tests read headers the browser sent from here. */
  const lastRequest = (path: string) => [...fixture.site.requests].reverse().find((request) => request.url.startsWith(path));

  it('lists the session tools with titles, annotations and input and output schemas', async () => {
    const { tools } = await fixture.server.client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['session_start', 'navigate', 'session_end', 'session_list']));
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.annotations, tool.name).toBeDefined();
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const navigate = tools.find((tool) => tool.name === 'navigate')!;
    expect(navigate.inputSchema.required).toEqual(expect.arrayContaining(['sessionId', 'url']));
    const options = (navigate.inputSchema.properties as Record<string, { properties?: Record<string, { enum?: string[] }> }>).options!;
    expect(options.properties!.waitUntil!.enum).toEqual(['load', 'domcontentloaded', 'networkidle']);
    expect(navigate.outputSchema!.required).toEqual(['status']);
    expect(tools.find((tool) => tool.name === 'session_start')!.outputSchema!.required).toEqual(
      expect.arrayContaining(['id', 'mainFrameId']),
    );
  });

  it('structuredContent of every session tool validates against the outputSchema it lists', async () => {
    const { tools } = await fixture.server.client.listTools();
    const ajv = new Ajv2020({ strict: false });
    const validate = (name: string, content: unknown) => {
      const check = ajv.compile(tools.find((tool) => tool.name === name)!.outputSchema!);
      expect(check(content), `${name}: ${JSON.stringify(check.errors)}`).toBe(true);
    };
    const started = await fixture.server.call('session_start');
    validate('session_start', started.structuredContent);
    const id = (started.structuredContent as unknown as SessionInfo).id;
    validate('navigate', (await navigate(id, fixture.site.url('/redirect?to=/frames.html'))).structuredContent);
    validate('navigate', (await navigate(id, fixture.site.url('/frames.html#x'))).structuredContent);
    validate('session_list', (await fixture.server.call('session_list')).structuredContent);
    validate('session_end', (await end(id)).structuredContent);
  });

  it('navigate answers one line (URL, status, title) and the page text with refs; pageText: false leaves the text out; act and extract say where the page is when it moved', async () => {
    const id = await start();
    const shown = (result: { content: unknown }) => (result.content as Array<{ type: string; text: string }>)[0]!.text;
    const loaded = await navigate(id, fixture.site.url('/pages/form.html'));
    const [head, ...text] = shown(loaded).split('\n');
    expect(head).toMatch(new RegExp(`^Loaded ${fixture.site.url('/pages/form.html').replace(/[.?]/g, '\\$&')} \\(200 OK\\) ".+"$`));
    expect(text.join('\n')).toMatch(/\[\d+\] textbox/);
    // structuredContent has what the first line says, not the page text again; headers are REST's and the library's.
    expect(loaded.structuredContent).toEqual({ url: fixture.site.url('/pages/form.html'), status: 200, title: head!.match(/"(.+)"$/)![1] });
    expect(shown(loaded)).not.toContain('content-type');

    const bare = await navigate(id, fixture.site.url('/status?code=404'), { pageText: false });
    expect(shown(bare)).toBe(`Loaded ${fixture.site.url('/status?code=404')} (404 Not Found)`);
    expect(bare.structuredContent).toEqual({ url: fixture.site.url('/status?code=404'), status: 404 });
    // The client has not seen this page's title yet: extract says where it is, then does not repeat it.
    const moved = await fixture.server.call('extract', { sessionId: id });
    expect(shown(moved)).toMatch(/^Page: "Status 404" http.*\n# Status 404$/);
    // The page text is the text content only; structuredContent has where the page is when the text says it.
    expect(moved.structuredContent).toEqual({ url: fixture.site.url('/status?code=404'), title: 'Status 404' });
    const again = await fixture.server.call('extract', { sessionId: id });
    expect(shown(again)).toBe('# Status 404');
    expect(again.structuredContent).toEqual({});
    await end(id);
  });

  it('session_start returns distinct unguessable ids', async () => {
    const ids = await Promise.all([start(), start(), start()]);
    expect(new Set(ids).size).toBe(3);
    // 160 random bits in base64url
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{27,}$/);
    await Promise.all(ids.map(end));
  });

  it('navigate returns status and final url, and an action id in _meta, for a 200 page', async () => {
    const id = await start();
    const result = await navigate(id, fixture.site.url('/echo-headers'));
    expect(result.structuredContent).toMatchObject({ url: fixture.site.url('/echo-headers'), status: 200 });
    expect(result._meta?.actionId).toMatch(/[0-9a-f-]{36}/);
    await end(id);
  });

  it('navigate treats a 404 page as a successful navigation with status 404', async () => {
    const id = await start();
    const output = await okNav(id, fixture.site.url('/no-such-page.html'));
    expect(output).toMatchObject({ status: 404, url: fixture.site.url('/no-such-page.html') });
    await end(id);
  });

  it('navigate follows redirects and answers the final url', async () => {
    const id = await start();
    const output = await okNav(id, fixture.site.url('/redirect?to=/page2.html'));
    expect(output).toMatchObject({ status: 200, url: fixture.site.url('/page2.html') });
    await end(id);
  });

  it('navigate sends options.referer to the server', async () => {
    const id = await start();
    await okNav(id, fixture.site.url('/echo-headers?referer-test'), { options: { referer: 'http://referrer.example/from' } });
    expect(lastRequest('/echo-headers?referer-test')?.headers.referer).toBe('http://referrer.example/from');
    await end(id);
  });

  it('navigate honours options.timeout with a navigation_timeout error instead of hanging', async () => {
    const id = await start();
    const started = Date.now();
    const result = await navigate(id, fixture.site.url('/slow?ms=20000'), { options: { timeout: 800 } });
    expect(errorCode(result)).toBe('navigation_timeout');
    // The page would answer after 20 s; anything well short of that means the timeout was honoured.
    expect(Date.now() - started).toBeLessThan(10_000);
    await end(id);
  });

  it('a navigation the client cancels frees the session for the next call at once', async () => {
    const id = await start();
    const controller = new AbortController();
    const cancelled = fixture.server.client.callTool(
      { name: 'navigate', arguments: { sessionId: id, url: fixture.site.url('/slow?ms=20000') } },
      undefined,
      { signal: controller.signal },
    );
    expect(await waitFor(() => fixture.site.requests.some((request) => request.url === '/slow?ms=20000'), 30_000)).toBe(true);
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    const started = Date.now();
    expect((await okNav(id, fixture.site.url('/page2.html'))).status).toBe(200);
    // Without cancellation this call would have queued behind the 30 s default timeout.
    expect(Date.now() - started).toBeLessThan(15_000);
    await end(id);
  });

  it('navigate with waitUntil domcontentloaded returns while waiting for load would time out', async () => {
    const id = await start();
    const url = fixture.site.url('/slow-subresource?ms=30000');
    const early = await okNav(id, url, { options: { waitUntil: 'domcontentloaded', timeout: 5_000 } });
    expect(early).toMatchObject({ status: 200, url });
    const loadResult = await navigate(id, url, { options: { waitUntil: 'load', timeout: 1_000 } });
    expect(errorCode(loadResult)).toBe('navigation_timeout');
    await end(id);
  });

  it('navigate with frameId loads the URL in that iframe', async () => {
    const id = await start();
    await okNav(id, fixture.site.url('/frames.html'));
    const info = (await sessionInfo(id))!;
    const child = info.frames.find((frame) => frame.name === 'child')!;
    expect(child).toMatchObject({ url: fixture.site.url('/page2.html'), parentFrameId: info.mainFrameId });
    const output = await okNav(id, fixture.site.url('/index.html'), { frameId: child.frameId });
    expect(output).toMatchObject({ status: 200 });
    const after = (await sessionInfo(id))!;
    expect(after.url).toBe(fixture.site.url('/frames.html'));
    expect(after.frames.find((frame) => frame.frameId === child.frameId)?.url).toBe(fixture.site.url('/index.html'));
    await end(id);
  });

  it('navigate with an unknown frameId is a frame_not_found error', async () => {
    const id = await start();
    expect(errorCode(await navigate(id, fixture.site.url('/index.html'), { frameId: '9999' }))).toBe('frame_not_found');
    await end(id);
  });

  it('navigate returns null result for same-document navigation', async () => {
    const id = await start();
    await okNav(id, fixture.site.url('/hash.html'));
    const output = await okNav(id, fixture.site.url('/hash.html#section'));
    expect(output).toMatchObject({ status: null });
    await end(id);
  });

  it('every bad input is an isError result with a stable code', async () => {
    const id = await start();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['malformed URL', { sessionId: id, url: 'not a url' }, 'invalid_argument'],
      ['file: URL', { sessionId: id, url: 'file:///etc/passwd' }, 'url_not_allowed'],
      ['javascript: URL', { sessionId: id, url: 'javascript:alert(1)' }, 'url_not_allowed'],
      ['data: URL', { sessionId: id, url: 'data:text/html,<h1>hi</h1>' }, 'url_not_allowed'],
      ['ftp: URL', { sessionId: id, url: 'ftp://example.com/' }, 'url_not_allowed'],
      ['unknown session', { sessionId: 'no-such-session', url: fixture.site.url('/index.html') }, 'session_not_found'],
      ['DNS failure', { sessionId: id, url: 'http://no-such-host.invalid/', options: { timeout: 10_000 } }, 'navigation_failed'],
      [
        'waitUntil outside the enum',
        { sessionId: id, url: fixture.site.url('/index.html'), options: { waitUntil: 'networkidle0' } },
        'invalid_argument',
      ],
      ['negative timeout', { sessionId: id, url: fixture.site.url('/index.html'), options: { timeout: -5 } }, 'invalid_argument'],
      ['missing url', { sessionId: id }, 'invalid_argument'],
      ['unknown field', { sessionId: id, url: fixture.site.url('/index.html'), bogus: 1 }, 'invalid_argument'],
    ];
    for (const [label, args, code] of cases) {
      const result = await fixture.server.call('navigate', args);
      expect(result.isError, label).toBe(true);
      expect(errorCode(result), label).toBe(code);
      expect((result._meta?.error as { message: string }).message.length, label).toBeGreaterThan(10);
    }
    expect(errorCode(await fixture.server.call('session_end', { sessionId: 'no-such-session' }))).toBe('session_not_found');
    // The session survives all of that.
    expect((await okNav(id, fixture.site.url('/index.html'))).status).toBe(200);
    await end(id);
  });

  // 20 browser contexts at once took over 60 s at a load average of 50; a test left running would leave renderers behind.
  it('20 sessions started and navigated concurrently are isolated from each other', { timeout: 180_000 }, async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, start));
    expect(new Set(ids).size).toBe(20);
    // Only even sessions get a cookie; odd sessions must not see any.
    await Promise.all(ids.map((id, i) => okNav(id, fixture.site.url(i % 2 === 0 ? `/set-cookie?value=s${i}` : '/index.html'))));
    await Promise.all(ids.map((id, i) => okNav(id, fixture.site.url(`/cookies?i=${i}`))));
    for (let i = 0; i < ids.length; i++) {
      const cookie = fixture.site.requests.find((request) => request.url === `/cookies?i=${i}`);
      expect(cookie?.headers.cookie, `session ${i}`).toBe(i % 2 === 0 ? `token=s${i}` : undefined);
    }
    await Promise.all(ids.map(end));
  });

  it('session_end frees the browser context and the id stops working', { timeout: 120_000 }, async () => {
    // Counted by process id, not by total: under load, renderers of earlier tests may still be exiting and Chromium
    // may start a spare one at any time, so a count taken before says little about the ones these sessions use.
    const renderers = () => new Set(renderersUnder(fixture.server.pid!).map((entry) => entry.pid));
    const before = renderers();
    const ids = await Promise.all([start(), start(), start()]);
    await Promise.all(ids.map((id) => okNav(id, fixture.site.url('/index.html'))));
    // Each context renders in its own process; one of them may have taken the spare renderer that was ready.
    const used = [...renderers()].filter((pid) => !before.has(pid));
    expect(used.length).toBeGreaterThanOrEqual(2);
    for (const id of ids) expect((await end(id)).structuredContent).toEqual({ success: true });
    // Every renderer the sessions started exits, except at most one: the spare Chromium may start after one is taken.
    await expect.poll(() => used.filter((pid) => renderers().has(pid)).length, { timeout: 60_000, interval: 250 }).toBeLessThanOrEqual(1);
    for (const id of ids) {
      expect(await sessionInfo(id)).toBeUndefined();
      expect(errorCode(await navigate(id, fixture.site.url('/index.html')))).toBe('session_not_found');
    }
  });

  it('navigate sends progress notifications when the client passes a progressToken', async () => {
    const id = await start();
    const messages: string[] = [];
    const result = (await fixture.server.client.callTool(
      // The image takes 500 ms, so the early stages are on the wire well before the result.
      { name: 'navigate', arguments: { sessionId: id, url: fixture.site.url('/slow-subresource?ms=500') } },
      undefined,
      { onprogress: (progress) => messages.push(progress.message ?? '') },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(messages[0], JSON.stringify(messages)).toMatch(/^navigating to /);
    // Not the last stages: the SDK client drops progress that shares a read with the result (typescript-sdk issue 2580).
    expect(messages, JSON.stringify(messages)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^response 200/), 'DOM content loaded']),
    );
    await end(id);
  });

  it('navigate with streamResponse sends its stages as log messages', async () => {
    const id = await start();
    const stages: string[] = [];
    fixture.server.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      stages.push(String((notification.params.data as { stage?: string }).stage));
    });
    await okNav(id, fixture.site.url('/page2.html'), { streamResponse: true });
    expect(await waitFor(() => stages.includes('finished'), 30_000)).toBe(true);
    expect(stages).toEqual(expect.arrayContaining(['started', 'response', 'domcontentloaded', 'load', 'finished']));
    await end(id);
  });

  it('alert and confirm dialogs do not block navigation and are reported in _meta.pageEvents', async () => {
    const id = await start();
    const result = await navigate(id, fixture.site.url('/dialogs.html'), { options: { timeout: 10_000 } });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const dialogs = pageEvents(result).filter((event) => event.type === 'dialog');
    expect(dialogs.map((event) => event.message)).toEqual([
      expect.stringMatching(/alert "Hello from alert" was accepted/),
      expect.stringMatching(/confirm "Proceed\?" was dismissed/),
    ]);
    await end(id);
  });

  it('a popup window is closed and reported as a page event', async () => {
    const id = await start();
    const result = await navigate(id, fixture.site.url('/popup.html'));
    expect(result.isError).toBeFalsy();
    // Chromium surfaces a popup once its first document commits, often after the opener's load: then the next call reports it.
    const isPopup = (event: { type: string }) => event.type === 'popup';
    expect(await waitFor(async () => ((await sessionInfo(id))?.recentEvents ?? []).some(isPopup), 30_000)).toBe(true);
    const next = await navigate(id, fixture.site.url('/index.html'));
    const popups = [...pageEvents(result), ...pageEvents(next)].filter(isPopup);
    expect(popups).toEqual([expect.objectContaining({ type: 'popup', url: fixture.site.url('/page2.html') })]);
    await end(id);
  });

  it('an endlessly loading page times out and the session stays usable', async () => {
    const id = await start();
    const result = await navigate(id, fixture.site.url('/hang'), { options: { timeout: 1_000 } });
    expect(errorCode(result)).toBe('navigation_timeout');
    expect((await okNav(id, fixture.site.url('/page2.html'))).status).toBe(200);
    await end(id);
  });

  it(
    'a session stuck in an infinite-loop page does not block another session and recovers after the timeout',
    { timeout: 120_000 },
    async () => {
      const [busy, other] = await Promise.all([start(), start()]);
      let stuckSettled = false;
      // 15 s: the other session's navigate must finish inside it even on a loaded machine.
      const stuck = navigate(busy, fixture.site.url('/loop.html'), { options: { timeout: 15_000 } }).finally(() => (stuckSettled = true));
      // The busy session's browser has fetched the looping page before the other session starts.
      await expect.poll(() => fixture.site.requests.some((request) => request.url === '/loop.html'), { timeout: 30_000 }).toBe(true);
      const output = await okNav(other, fixture.site.url('/index.html'));
      expect(output.status).toBe(200);
      // The other session finished while the busy one was still spinning.
      expect(stuckSettled).toBe(false);
      expect(errorCode(await stuck)).toBe('navigation_timeout');
      // The hung page is swapped for a fresh one, so the busy session works again and says why.
      expect((await okNav(busy, fixture.site.url('/page2.html'))).status).toBe(200);
      expect((await sessionInfo(busy))!.recentEvents.map((event) => event.type)).toContain('unresponsive');
      await Promise.all([end(busy), end(other)]);
    },
  );
});
