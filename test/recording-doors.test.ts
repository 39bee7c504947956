import { describe, expect, it } from 'vitest';
import { api } from './http-fixture.js';
import { bearer, connectMcpHttp } from './fixtures/mcp-http.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { filesContaining, openTraceZip } from './fixtures/trace-zip.js';
import { findAction } from './fixtures/refs.js';

const KEY_A = 'key-a-recording-0123456789';
const KEY_B = 'key-b-recording-0123456789';
const SECRET = 'Rest-S3cret-Value!';

const fixture = useSiteHttp({ apiKeys: [KEY_A, KEY_B] });

describe('recording over REST', { timeout: 150_000 }, () => {
  it("answers the trace zip and the log, with the actionIds the calls answered, no secret; key B gets 404 for key A's", async () => {
    const started = await api(fixture.server.url, 'POST', '/v1/sessions/start', { key: KEY_A, body: { record: true } });
    expect(started.status).toBe(200);
    const id = started.json.data.id as string;
    const ids: string[] = [];
    const call = async (operation: string, body: unknown) => {
      const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/${operation}`, { key: KEY_A, body });
      expect(res.status).toBe(200);
      ids.push(res.json.data.actionId);
      return res.json.data.result;
    };
    await call('navigate', { url: fixture.site.url('/recording/login.html') });
    const { actions } = await call('observe', {});
    await call('act', { action: { ...findAction(actions, /textbox: Password/), arguments: { value: '%pw%' } }, variables: { pw: SECRET } });
    await call('act', { action: findAction(actions, /button: Sign in/) });
    const next = await call('observe', {});
    expect((await call('act', { action: findAction(next.actions, /link: Statements/) })).url).toBe(
      fixture.site.url('/recording/statements.html'),
    );

    const res = await fetch(`${fixture.server.url}/v1/sessions/${id}/trace`, { method: 'POST', headers: { 'x-svc-api-key': KEY_A } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const zip = Buffer.from(await res.arrayBuffer());
    const trace = openTraceZip(zip);
    // The former path answers the same until 0.3.0 (a deprecated alias in the OpenAPI document).
    const former = await fetch(`${fixture.server.url}/v1/sessions/${id}/recording`, {
      method: 'POST',
      headers: { 'x-svc-api-key': KEY_A },
    });
    expect(former.status).toBe(200);
    expect(openTraceZip(Buffer.from(await former.arrayBuffer())).groups.map((group) => group.title)).toEqual(
      trace.groups.map((group) => group.title),
    );
    const described = (await api(fixture.server.url, 'GET', '/v1/openapi.json', {})).json.paths['/v1/sessions/{id}/recording'].post;
    expect(described).toMatchObject({ operationId: 'SessionRecording', deprecated: true });
    const operations = ['navigate', 'observe', 'act', 'act', 'observe', 'act'];
    expect(trace.groups.map((group) => group.title)).toEqual(ids.map((actionId, i) => `${operations[i]} ${actionId}`));
    const formEncoded = new URLSearchParams({ v: SECRET }).toString().slice('v='.length);
    for (const secret of [SECRET, encodeURIComponent(SECRET), formEncoded]) expect(filesContaining(trace.files, secret)).toEqual([]);

    const log = await api(fixture.server.url, 'GET', `/v1/sessions/${id}/log`, { key: KEY_A });
    expect(log.status).toBe(200);
    expect(log.json.data.entries.map((entry: { operation: string; actionId: string }) => [entry.operation, entry.actionId])).toEqual(
      ids.map((actionId, i) => [operations[i], actionId]),
    );
    expect(JSON.stringify(log.json)).not.toContain(SECRET);

    for (const [method, path] of [
      ['POST', `/v1/sessions/${id}/trace`],
      ['GET', `/v1/sessions/${id}/log`],
    ] as const) {
      const other = await api(fixture.server.url, method, path, { key: KEY_B });
      expect(other.status).toBe(404);
      expect(other.json.error.code).toBe('session_not_found');
    }
    await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY_A });
  });

  it('a session without record answers 409 recording_not_enabled; a bad record option is 400', async () => {
    const started = await api(fixture.server.url, 'POST', '/v1/sessions/start', { key: KEY_A });
    const id = started.json.data.id as string;
    const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/trace`, { key: KEY_A });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ success: false, error: { code: 'recording_not_enabled' } });
    expect((await api(fixture.server.url, 'GET', `/v1/sessions/${id}/log`, { key: KEY_A })).json.data).toEqual({ entries: [], dropped: 0 });
    await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY_A });
    const bad = await api(fixture.server.url, 'POST', '/v1/sessions/start', { key: KEY_A, body: { record: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_argument');
  });
});

describe('recording over MCP', { timeout: 150_000 }, () => {
  it('session_log answers the log, and with operation session_trace the zip as an embedded resource whose step is the call _meta.actionId', async () => {
    const { client } = await connectMcpHttp(fixture.server.url, { name: 'recording-test', headers: bearer(KEY_A) });
    try {
      const started = await client.callTool({ name: 'session_start', arguments: { record: { screenshots: false } } });
      const sessionId = (started.structuredContent as { id: string }).id;
      const navigated = await client.callTool({
        name: 'navigate',
        arguments: { sessionId, url: fixture.site.url('/recording/statements.html') },
      });
      const actionId = (navigated._meta as { actionId: string }).actionId;
      const log = await client.callTool({ name: 'session_log', arguments: { sessionId } });
      expect(log.isError).toBeFalsy();
      const entries = (log.structuredContent as { entries: Array<{ actionId: string; operation: string }> }).entries;
      expect(entries.map((entry) => [entry.operation, entry.actionId])).toEqual([['navigate', actionId]]);
      const result = await client.callTool({ name: 'session_log', arguments: { sessionId, operation: 'session_trace' } });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as { bytes: number };
      const resource = (result.content as Array<{ type: string; resource?: { mimeType: string; blob: string } }>).find(
        (item) => item.type === 'resource',
      )!.resource!;
      expect(resource.mimeType).toBe('application/zip');
      const zip = Buffer.from(resource.blob, 'base64');
      expect(zip.length).toBe(structured.bytes);
      expect(openTraceZip(zip).groups.map((group) => group.title)).toEqual([`navigate ${actionId}`]);
      await client.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await client.close();
    }
  });
});
