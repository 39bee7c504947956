import { spawnSync } from 'node:child_process';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { ServiceError } from '../src/core/errors.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startInternalServer } from './fixtures/egress-sites.js';
import { bearer, connectMcpHttp, useMcpHttpClient, type McpHttpClient } from './fixtures/mcp-http.js';
import { errorCode, ROOT } from './fixtures/mcp-stdio.js';
import { refOf } from './fixtures/refs.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { startSiteServer } from './fixtures/site-server.js';
import { useStarted } from './fixtures/use-started.js';
import { api, startHttp } from './http-fixture.js';

const KEY = 'evaluate-test-key-0123456789';
const SECRET = 'Hun7er2-"quoted"\\slash';

/** REST and MCP over /mcp of one server. */
function doors(base: () => string, mcp: McpHttpClient) {
  const rest = (path: string, body: unknown) => api(base(), 'POST', path, { key: KEY, body });
  return {
    rest,
    start: async () => (await rest('/v1/sessions/start', {})).json.data.id as string,
    evaluate: (id: string, body: Record<string, unknown>) => rest(`/v1/sessions/${id}/evaluate`, body),
    mcpEvaluate: async (id: string, args: Record<string, unknown>) =>
      (await mcp.client.callTool({ name: 'evaluate', arguments: { sessionId: id, ...args } })) as CallToolResult,
  };
}

describe('evaluate runs a script in the page', { timeout: 120_000 }, () => {
  const fixture = useSiteHttp({ apiKeys: [KEY] });
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'evaluate-test', headers: bearer(KEY) });
  const door = doors(() => fixture.server.url, mcp);

  async function openPage(): Promise<string> {
    const id = await door.start();
    const loaded = await door.rest(`/v1/sessions/${id}/navigate`, { url: fixture.site.url('/evaluate/index.html') });
    expect(loaded.status).toBe(200);
    return id;
  }

  it('answers an expression, a function with an arg and a ref’s element, over REST and MCP', async () => {
    const id = await openPage();
    const title = await door.evaluate(id, { expression: 'document.title' });
    expect(title.status).toBe(200);
    expect(title.json.data.result).toEqual({ result: 'Evaluate' });
    expect(title.json.data.actionId).toEqual(expect.any(String));
    expect((await door.evaluate(id, { expression: 'async (n) => n * 2', arg: 21 })).json.data.result).toEqual({ result: 42 });
    expect((await door.evaluate(id, { expression: 'undefined' })).json.data.result).toEqual({ result: null });
    const towers = await door.evaluate(id, {
      expression: '() => [...document.querySelectorAll("#towers li")].map((li) => Number(li.textContent))',
    });
    expect(towers.json.data.result).toEqual({ result: [3, 2, 1] });

    const viaMcp = await door.mcpEvaluate(id, { expression: '({ title: document.title, moves: window.moves })' });
    expect(viaMcp.isError).toBeFalsy();
    expect(viaMcp.structuredContent).toEqual({ result: { title: 'Evaluate', moves: 0 } });
    expect(viaMcp.content).toEqual([{ type: 'text', text: '{"title":"Evaluate","moves":0}' }]);
    expect(viaMcp._meta?.actionId).toEqual(expect.any(String));

    // A ref from the page text: the function gets its element first, then the arg.
    const pageText = (await door.rest(`/v1/sessions/${id}/extract`, {})).json.data.result.pageText as string;
    const hold = refOf(pageText, /button: Hold for 1 s/);
    expect((await door.evaluate(id, { ref: hold, expression: '(el, suffix) => el.id + suffix', arg: '!' })).json.data.result).toEqual({
      result: 'hold!',
    });
    // What no click can do: hold the button down for a second, in one call.
    const held = await door.mcpEvaluate(id, {
      ref: hold,
      expression:
        'async (el) => { el.dispatchEvent(new MouseEvent("mousedown")); await new Promise((r) => setTimeout(r, 1100)); ' +
        'el.dispatchEvent(new MouseEvent("mouseup")); return document.getElementById("held").textContent; }',
    });
    expect(held.structuredContent).toEqual({ result: 'held' });
    // A DOM node comes back as its tag, a BigInt as a string.
    expect((await door.evaluate(id, { expression: '[document.getElementById("greeting"), 10n]' })).json.data.result).toEqual({
      result: ['<h1#greeting>', '10'],
    });
    const stale = await door.evaluate(id, { ref: '9999', expression: '(el) => el.id' });
    expect([stale.status, stale.json.error.code]).toEqual([404, 'ref_not_found']);
  });

  it('a script that throws answers evaluation_failed with its first line, not a 500; so does a value JSON cannot carry', async () => {
    const id = await openPage();
    const thrown = await door.evaluate(id, { expression: '() => { throw new RangeError("no such disk\\nsecond line") }' });
    expect(thrown.status).toBe(422);
    expect(thrown.json.error.code).toBe('evaluation_failed');
    expect(thrown.json.error.message).toBe('The script threw RangeError: no such disk');
    const viaMcp = await door.mcpEvaluate(id, { expression: 'missingName + 1' });
    expect(errorCode(viaMcp)).toBe('evaluation_failed');
    expect((viaMcp.content as Array<{ text: string }>)[0]!.text).toContain('ReferenceError: missingName is not defined');
    const statements = await door.evaluate(id, { expression: 'const a = 1; a' });
    expect(statements.json.error.message).toMatch(/SyntaxError.*statements go in a function/);
    const circular = await door.evaluate(id, { expression: '() => { const a = {}; a.self = a; return a; }' });
    expect([circular.status, circular.json.error.code]).toEqual([422, 'evaluation_failed']);
    expect(circular.json.error.message).toContain('circular');
    // The session goes on.
    expect((await door.evaluate(id, { expression: '1 + 1' })).json.data.result).toEqual({ result: 2 });
  });

  it('a script that never returns is stopped at timeoutMs, and the next call on the session answers on the same page', async () => {
    const id = await openPage();
    await door.evaluate(id, { expression: '() => { window.marker = "kept"; }' });
    const started = performance.now();
    const looping = await door.evaluate(id, { expression: '() => { while (true) {} }', timeoutMs: 1_000 });
    expect([looping.status, looping.json.error.code]).toEqual([408, 'timeout']);
    expect(looping.json.error.message).toContain('a loop was terminated');
    expect(performance.now() - started).toBeLessThan(8_000);
    // The loop was terminated rather than the page replaced: what the page held is still there.
    const next = await door.evaluate(id, { expression: 'window.marker' });
    expect(next.json.data.result).toEqual({ result: 'kept' });

    const waiting = await door.mcpEvaluate(id, { expression: '() => new Promise(() => {})', timeoutMs: 500 });
    expect(errorCode(waiting)).toBe('timeout');
    expect((await door.mcpEvaluate(id, { expression: 'window.marker' })).structuredContent).toEqual({ result: 'kept' });
    // A caller that gives up stops the loop the same way (the library, with its signal).
    const library = new BrowserSessions({ service: fixture.server.service });
    const own = await library.startSession();
    await own.navigate(fixture.site.url('/evaluate/index.html'));
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    const dropped = await library
      .call('evaluate', { sessionId: own.id, expression: '() => { while (true) {} }' }, { signal: abort.signal })
      .catch((err: unknown) => err);
    expect(dropped instanceof ServiceError && dropped.code).toBe('cancelled');
    expect(await library.call('evaluate', { sessionId: own.id, expression: 'document.title' })).toEqual({ result: 'Evaluate' });
    await own.end();
    const refused = await door.evaluate(id, { expression: '1', timeoutMs: 60_001 });
    expect([refused.status, refused.json.error.code]).toEqual([400, 'invalid_argument']);
  });

  it('a result over 65,536 characters of JSON answers its first part as a string and truncated: true', async () => {
    const id = await openPage();
    const long = await door.evaluate(id, { expression: '() => Array.from({ length: 20000 }, (_, i) => i)' });
    expect(long.status).toBe(200);
    const { result, truncated } = long.json.data.result as { result: string; truncated: boolean };
    expect(truncated).toBe(true);
    expect(result).toHaveLength(65_536);
    expect(result.startsWith('[0,1,2,3,')).toBe(true);
    const viaMcp = await door.mcpEvaluate(id, { expression: '"x".repeat(70000)' });
    expect(viaMcp.structuredContent).toMatchObject({ truncated: true });
    expect((viaMcp.content as Array<{ text: string }>)[0]!.text).toMatch(/\(truncated: the first 65536 characters of the JSON\)$/);
    const huge = await door.evaluate(id, { expression: '"x".repeat(2_000_000)' });
    expect([huge.status, huge.json.error.code]).toEqual([422, 'evaluation_failed']);
    expect(huge.json.error.message).toContain('return less');
  });

  it('a secret act filled from variables never comes back: not as the value, a key, a number, an error or in the log', async () => {
    const id = await openPage();
    const pageText = (await door.rest(`/v1/sessions/${id}/extract`, {})).json.data.result.pageText as string;
    const filled = await door.rest(`/v1/sessions/${id}/act`, {
      action: { ref: refOf(pageText, /Password/), method: 'fill', arguments: { value: '%pw%' } },
      variables: { pw: SECRET },
    });
    expect(filled.status, JSON.stringify(filled.json)).toBe(200);
    const read = 'document.getElementById("password").value';
    const answers: unknown[] = [];
    const value = await door.evaluate(id, { expression: read });
    expect(value.json.data.result).toEqual({ result: '%pw%' });
    answers.push(value.json);
    const viaMcp = await door.mcpEvaluate(id, { expression: read });
    expect(viaMcp.structuredContent).toEqual({ result: '%pw%' });
    answers.push(viaMcp);
    answers.push((await door.evaluate(id, { expression: `({ [${read}]: [${read}, "in " + ${read} + " text"] })` })).json);
    answers.push((await door.evaluate(id, { expression: `() => { throw new Error("it is " + ${read}); }` })).json);
    answers.push(await door.mcpEvaluate(id, { expression: `() => { throw new Error("it is " + ${read}); }` }));
    answers.push((await door.evaluate(id, { expression: `() => ${read}.repeat(20000)` })).json);
    answers.push((await api(fixture.server.url, 'GET', `/v1/sessions/${id}/log`, { key: KEY })).json);
    for (const answer of answers) {
      const text = JSON.stringify(answer);
      expect(text.includes(SECRET) || text.includes(JSON.stringify(SECRET).slice(1, -1)), text.slice(0, 300)).toBe(false);
    }
    // A PIN read back as a number is masked too.
    await door.rest(`/v1/sessions/${id}/act`, {
      action: { ref: refOf(pageText, /Password/), method: 'fill', arguments: { value: '%pin%' } },
      variables: { pin: '924613' },
    });
    expect((await door.evaluate(id, { expression: `Number(${read})` })).json.data.result).toEqual({ result: '%pin%' });
  });
});

describe('evaluate under the egress policy "public"', { timeout: 120_000 }, () => {
  const state = useStarted<{
    internal: Awaited<ReturnType<typeof startInternalServer>>;
    site: Awaited<ReturnType<typeof startSiteServer>>;
    server: Awaited<ReturnType<typeof startHttp>>;
  }>(async (s) => {
    s.internal = await startInternalServer();
    s.site = await startSiteServer();
    const service = new BrowserService({
      logger: silentLogger(),
      env: {},
      egressPolicy: 'public',
      egressAllow: [`127.0.0.1:${new URL(s.site.origin).port}`],
    });
    s.server = await startHttp({ apiKeys: [KEY] }, service);
  });

  it("a fetch() to a loopback address the policy refuses fails inside the script; the page's own site answers", async () => {
    const rest = (path: string, body: unknown) => api(state.server.url, 'POST', path, { key: KEY, body });
    const id = (await rest('/v1/sessions/start', {})).json.data.id as string;
    expect((await rest(`/v1/sessions/${id}/navigate`, { url: state.site.url('/evaluate/index.html') })).status).toBe(200);
    const tryFetch =
      'async (url) => { try { const res = await fetch(url); return "reached " + res.status; } catch (e) { return "refused: " + e.message; } }';
    const internal = await rest(`/v1/sessions/${id}/evaluate`, { expression: tryFetch, arg: `http://127.0.0.1:${state.internal.port}/` });
    expect(internal.json.data.result.result).toMatch(/^refused: /);
    expect(internal.json.data.pageEvents).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'blocked' })]));
    expect(state.internal.connections).toBe(0);
    const own = await rest(`/v1/sessions/${id}/evaluate`, { expression: tryFetch, arg: state.site.url('/index.html') });
    expect(own.json.data.result).toEqual({ result: 'reached 200' });
  });
});

describe('--operations-denied turns evaluate off on every door', { timeout: 120_000 }, () => {
  const state = useStarted<{ server: Awaited<ReturnType<typeof startHttp>> }>(async (s) => {
    s.server = await startHttp(
      { apiKeys: [KEY] },
      new BrowserService({ logger: silentLogger(), egressPolicy: 'all', operationsDenied: ['evaluate', 'session_trace'] }),
    );
  });

  it('absent from tools/list, operation_not_allowed (403) over MCP, REST and the library', async () => {
    const { client } = await connectMcpHttp(state.server.url, { name: 'denied-test', headers: bearer(KEY) });
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).not.toContain('evaluate');
      expect(names).toEqual(expect.arrayContaining(['act', 'session_log']));
      // A folded operation leaves its host's listing too.
      expect(tools.find((tool) => tool.name === 'session_log')!.description).not.toContain('session_trace');

      const id = (await api(state.server.url, 'POST', '/v1/sessions/start', { key: KEY, body: {} })).json.data.id as string;
      const viaMcp = (await client.callTool({ name: 'evaluate', arguments: { sessionId: id, expression: '1' } })) as CallToolResult;
      expect(errorCode(viaMcp)).toBe('operation_not_allowed');
      expect((viaMcp.content as Array<{ text: string }>)[0]!.text).toContain('--operations-denied');
      const viaRest = await api(state.server.url, 'POST', `/v1/sessions/${id}/evaluate`, { key: KEY, body: { expression: '1' } });
      expect([viaRest.status, viaRest.json.error.code]).toEqual([403, 'operation_not_allowed']);
      expect(viaRest.json.error.message).toContain('--operations-denied');
      const library = new BrowserSessions({ service: state.server.service });
      const refused = await library.call('evaluate', { sessionId: id, expression: '1' }).catch((err: unknown) => err);
      expect(refused instanceof ServiceError && refused.code).toBe('operation_not_allowed');
      // Everything else still answers.
      expect((await client.callTool({ name: 'session_list', arguments: {} })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('a name that is no operation is refused at start, by the library and by the CLI', () => {
    expect(() => new BrowserSessions({ logger: silentLogger(), operationsDenied: ['evaluat'] })).toThrow(/no operation named evaluat;/);
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--operations-denied', 'evaluate,evaluat'], {
      cwd: ROOT,
      encoding: 'utf8',
      input: '',
      timeout: 90_000,
    });
    expect(cli.status).toBe(2);
    expect(cli.stderr).toContain('--operations-denied: no operation named evaluat;');
  });
});
