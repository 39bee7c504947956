import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useSiteHttp } from './fixtures/site-http.js';
import { api } from './http-fixture.js';
import { findAction } from './fixtures/refs.js';

const KEY = 'key-secrets-in-answers-0123456789';
// Every character a browser's form encoding escapes differently from encodeURIComponent, a space and HTML specials.
const SECRET = "S3cr!t pw&<x>~(y)'";

/** The forms the secret takes in a URL, a GET form's query, page text and HTML, each computed the browser's way. */
const FORMS = [
  SECRET,
  encodeURIComponent(SECRET),
  encodeURIComponent(SECRET).replace(/%20/g, '+'),
  // What Chromium keeps of a query a page or redirect wrote with encodeURIComponent (it escapes ' itself).
  new URL(`http://x/?p=${encodeURIComponent(SECRET)}`).search.slice('?p='.length),
  new URLSearchParams({ v: SECRET }).toString().slice('v='.length),
  SECRET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;'),
];

const fixture = useSiteHttp({ apiKeys: [KEY] });

function expectNoSecret(where: string, answer: unknown): void {
  const text = JSON.stringify(answer);
  for (const form of FORMS) expect({ where, form, found: text.includes(form) }).toEqual({ where, form, found: false });
}

describe(
  "answers never carry a secret the session has seen, after a GET form put it in the page's URL and text",
  { timeout: 120_000 },
  () => {
    it('extract, observe, act, and SessionInfo over REST and MCP mask it in every encoding', async () => {
      const call = async (operation: string, body: unknown) => {
        const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/${operation}`, { key: KEY, body });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        return res.json.data.result;
      };
      const started = await api(fixture.server.url, 'POST', '/v1/sessions/start', { key: KEY, body: {} });
      const id = started.json.data.id as string;
      const transport = new StreamableHTTPClientTransport(new URL(`${fixture.server.url}/mcp`), {
        requestInit: { headers: { 'x-svc-api-key': KEY } },
      });
      const client = new Client({ name: 'secrets-test', version: '1.0.0' });
      try {
        await call('navigate', { url: fixture.site.url('/recording/get-login-welcome.html') });
        const { actions } = await call('observe', {});
        await call('act', { action: { ...findAction(actions, /textbox: Username/), arguments: { value: 'alice' } } });
        await call('act', {
          action: { ...findAction(actions, /textbox: Password/), arguments: { value: '%pw%' } },
          variables: { pw: SECRET },
        });
        // A later act without the variable: the session still knows the secret.
        const signedIn = await call('act', { action: findAction(actions, /button: Sign in/) });
        expectNoSecret('act', signedIn);
        expect(signedIn.url).toContain('password=%25pw%25');

        // The page adds an iframe whose URL carries the query too.
        const info = async () => (await api(fixture.server.url, 'GET', `/v1/sessions/${id}`, { key: KEY })).json.data;
        await expect.poll(async () => (await info()).frames.length, { timeout: 15_000 }).toBe(2);

        const page = await call('extract', {});
        expect(page.pageText).toContain('Your password is %pw%');
        expectNoSecret('extract', page);
        expectNoSecret('extract with iframes', await call('extract', { iframes: true }));
        expectNoSecret('observe', await call('observe', { iframes: true }));
        expectNoSecret(
          'act on the page',
          await call('act', { action: findAction((await call('observe', {})).actions, /link: Sign in again/) }),
        );

        const got = await info();
        expect(got.url).toContain('password=%25pw%25');
        expect(got.frames[1].url).toContain('password=%25pw%25');
        expectNoSecret('REST session get', got);
        expectNoSecret('REST session list', (await api(fixture.server.url, 'GET', '/v1/sessions', { key: KEY })).json);

        // A redirect to the page that shows it: navigate's own answer (final URL, redirect chain) masks it too.
        const welcome = got.url.replace('password=%25pw%25', `password=${encodeURIComponent(SECRET)}`);
        const redirected = await call('navigate', { url: fixture.site.url(`/redirect?to=${encodeURIComponent(welcome)}`) });
        expect(redirected.url).toContain('password=%25pw%25');
        expectNoSecret('navigate after a redirect', redirected);

        await client.connect(transport);
        // session_get's MCP door is session_list with operation "session_get".
        for (const args of [{ operation: 'session_get', sessionId: id }, {}]) {
          const answer = (await client.callTool({ name: 'session_list', arguments: args })) as CallToolResult;
          expect(answer.isError, JSON.stringify(answer.content)).toBeFalsy();
          expect(JSON.stringify(answer.structuredContent)).toContain('password=%25pw%25');
          expectNoSecret(`MCP session_list ${JSON.stringify(args)}`, answer);
        }
      } finally {
        await client.close().catch(() => undefined);
        await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY });
      }
    });
  },
);
