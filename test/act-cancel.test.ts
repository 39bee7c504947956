import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { LOCAL_OWNER } from '../src/door.js';
import { postToolCall, useMcpHttpClient } from './fixtures/mcp-http.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { NO_MODEL_KEYS, useSiteStdio } from './fixtures/site-stdio.js';
import { within } from './fixtures/within.js';
import { api } from './http-fixture.js';

/** 300 keys at about 25 ms each on /act/slow-keys.html: some 8 s of typing if nothing stops it. */
const TEXT = 'a'.repeat(300);
/** How long after the cancel reaches the server the last key may land, and the next call may take (issue 40 item 4: 1 s). */
const STOP_BOUND_MS = 1_000;
/** How long a /mcp client that can resume its stream (2025-11-25) has to come back before its call is cancelled. */
const RESUME_GRACE_MS = 3_000;

describe('a client that drops its act stops the action (issue 40 item 4)', () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'act-cancel-test' });

  const post = (id: string, path: string, body: unknown) => api(fixture.server.url, 'POST', `/v1/sessions/${id}${path}`, { body });
  const typeAction = { action: { selector: '#field', method: 'type', arguments: { text: TEXT } }, timeoutMs: 60_000 };

  /** A session on the slow-keys page, and the page itself to count the keys that reach it. */
  async function slowKeys(): Promise<{ id: string; page: Page }> {
    const id = (await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id as string;
    expect((await post(id, '/navigate', { url: fixture.site.url('/act/slow-keys.html') })).json.data.result.status).toBe(200);
    return { id, page: fixture.server.service.sessions.get(id, LOCAL_OWNER).page };
  }

  const keyTimes = (page: Page) => page.evaluate(() => (window as unknown as { keyTimes: number[] }).keyTimes.slice());
  const typing = (page: Page) => expect.poll(async () => (await keyTimes(page)).length, { timeout: 20_000 }).toBeGreaterThan(10);

  /**
   * After the drop: the next call on the session answers within `nextBoundMs`, no key lands later than STOP_BOUND_MS
   * after `cancelledAt`, and none arrives while the page is watched one more second.
   */
  async function expectStopped(id: string, page: Page, cancelledAt: number, nextBoundMs: number): Promise<void> {
    await expectNextAct(id, nextBoundMs);
    const keys = await keyTimes(page);
    expect(keys.length).toBeLessThan(TEXT.length);
    expect(keys.at(-1)! - cancelledAt).toBeLessThan(STOP_BOUND_MS);
    // Nothing to await here but the absence of keys: the page is watched for a second.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await keyTimes(page)).length).toBe(keys.length);
    expect(await page.inputValue('#field')).toBe('a'.repeat(keys.length));
    await post(id, '/end', {});
  }

  /** The next act on the session answers 200 within `boundMs`. */
  async function expectNextAct(id: string, boundMs: number): Promise<void> {
    const next = await within(post(id, '/act', { action: { method: 'wait', arguments: { ms: 0 } } }), boundMs, 'the next act');
    expect(next.status).toBe(200);
  }

  /** Posts `body` to the session's act over REST and drops the request once `started` resolves; answers when it dropped. */
  async function dropRestAct(id: string, body: unknown, started: () => Promise<unknown>): Promise<number> {
    const abort = new AbortController();
    const call = fetch(`${fixture.server.url}/v1/sessions/${id}/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: abort.signal,
    }).catch(() => undefined);
    await started();
    abort.abort();
    const dropped = Date.now();
    await call;
    return dropped;
  }

  /** Resolves once the session is running an operation. */
  const busy = (id: string) => () =>
    expect.poll(() => fixture.server.service.sessions.get(id, LOCAL_OWNER).isBusy, { timeout: 10_000 }).toBe(true);

  it('REST: the request aborted mid-type stops the keys within 1 s and frees the session', async () => {
    const { id, page } = await slowKeys();
    const dropped = await dropRestAct(id, typeAction, () => typing(page));
    await expectStopped(id, page, dropped, STOP_BOUND_MS + 1_000);
  });

  it.each([
    ['2025-06-18', 0],
    ['2025-11-25', RESUME_GRACE_MS],
  ])('MCP over HTTP (protocol %s): a dropped tools/call stops its keys within 1 s of the cancel', async (version, graceMs) => {
    const { id, page } = await slowKeys();
    const abort = new AbortController();
    const res = await postToolCall(fixture.server.url, mcp, {
      version,
      id: `type-${version}`,
      name: 'act',
      arguments: { sessionId: id, ...typeAction },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    await typing(page);
    abort.abort();
    // A client that can resume its stream is given the grace to come back; the call is cancelled after it.
    const cancelled = Date.now() + graceMs;
    await expectStopped(id, page, cancelled, graceMs + STOP_BOUND_MS + 1_000);
  });

  it('REST: an aborted fill of a disabled field does not land when the field is enabled later', async () => {
    const { id, page } = await slowKeys();
    const fill = { action: { selector: '#later', method: 'fill', arguments: { value: 'too late' } }, timeoutMs: 60_000 };
    await dropRestAct(id, fill, busy(id));
    await expectNextAct(id, STOP_BOUND_MS + 1_000);
    await page.evaluate(() => ((document.getElementById('later') as HTMLInputElement).disabled = false));
    // Nothing to await but the absence of the fill: the field is watched for two seconds once it can be filled.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await page.inputValue('#later')).toBe('');
    await post(id, '/end', {});
  });

  it('REST: an aborted wait for text that never comes frees the session at once', async () => {
    const { id } = await slowKeys();
    await dropRestAct(id, { action: { method: 'wait', arguments: { text: 'Never shown' } }, timeoutMs: 60_000 }, busy(id));
    await expectNextAct(id, STOP_BOUND_MS + 1_000);
    await post(id, '/end', {});
  });
});

describe('a stdio client that cancels its act stops the action (issue 40 item 4)', () => {
  const fixture = useSiteStdio({ env: NO_MODEL_KEYS });

  /** A tool's answer: the result of an operation's envelope, or a session tool's bare structuredContent. */
  const structured = (result: CallToolResult) => {
    const content = result.structuredContent as { data?: { result?: unknown } } | undefined;
    return content?.data?.result ?? content;
  };
  const keyTimes = async (sessionId: string) =>
    (structured(await fixture.server.call('evaluate', { sessionId, expression: 'window.keyTimes' })) as { result: number[] }).result;

  it('notifications/cancelled mid-type stops the keys within 1 s and frees the session', async () => {
    const sessionId = (structured(await fixture.server.call('session_start', {})) as { id: string }).id;
    await fixture.server.call('navigate', { sessionId, url: fixture.site.url('/act/slow-keys.html') });
    const started = fixture.site.requests.filter((r) => r.url === '/typing-started').length;
    const abort = new AbortController();
    const call = fixture.server.client.callTool(
      {
        name: 'act',
        arguments: { sessionId, action: { selector: '#field', method: 'type', arguments: { text: TEXT } }, timeoutMs: 60_000 },
      },
      undefined,
      { signal: abort.signal },
    );
    call.catch(() => undefined);
    // The page tells the site server at its tenth key (the session is busy: an evaluate would wait in its queue).
    await expect
      .poll(() => fixture.site.requests.filter((r) => r.url === '/typing-started').length, { timeout: 20_000 })
      .toBeGreaterThan(started);
    abort.abort();
    const cancelled = Date.now();
    const keys = await within(keyTimes(sessionId), STOP_BOUND_MS + 1_000, 'the next call');
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.length).toBeLessThan(TEXT.length);
    expect(keys.at(-1)! - cancelled).toBeLessThan(STOP_BOUND_MS);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await keyTimes(sessionId)).length).toBe(keys.length);
    await fixture.server.call('session_end', { sessionId });
  });
});
