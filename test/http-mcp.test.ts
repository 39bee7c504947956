import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connectMcpHttp } from './fixtures/mcp-http.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { api } from './http-fixture.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('MCP over streamable HTTP', () => {
  const fixture = useSiteHttp();
  const connect = (url: string) => connectMcpHttp(url, { name: 'http-test' });

  it('lists the same tools as stdio and calls them, with structured content and progress', async () => {
    const { client } = await connect(fixture.server.url);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['session_start', 'navigate', 'extract', 'agent_execute', 'session_end', 'session_list']),
    );
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe('object');

    const started = (await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult;
    const id = (started.structuredContent as { id: string }).id;
    const progress: string[] = [];
    const nav = (await client.callTool(
      { name: 'navigate', arguments: { sessionId: id, url: fixture.site.url('/index.html') } },
      undefined,
      {
        onprogress: (p) => progress.push(p.message ?? ''),
      },
    )) as CallToolResult;
    expect(nav.isError).toBeFalsy();
    expect(nav.structuredContent).toMatchObject({ status: 200, url: fixture.site.url('/index.html') });
    expect(progress.length).toBeGreaterThan(0);

    const missing = (await client.callTool({
      name: 'navigate',
      arguments: { sessionId: 'nope', url: fixture.site.url('/') },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect((missing._meta?.error as { code: string }).code).toBe('session_not_found');

    await client.callTool({ name: 'session_end', arguments: { sessionId: id } });
    await client.close();
  });

  it('keeps one MCP session per Mcp-Session-Id: DELETE ends it, then the id is 404', async () => {
    const { client, transport } = await connect(fixture.server.url);
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const before = fixture.server.http.mcpSessionCount();
    expect(before).toBeGreaterThan(0);
    await transport.terminateSession();
    const after = await fetch(`${fixture.server.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
    expect((await after.json()).error.code).toBe(-32001);
    expect(fixture.server.http.mcpSessionCount()).toBe(before - 1);
    await client.close();
  });

  it('answers 400 without a session id, 404 for an unknown one, 400 for a bad protocol version, and opens a GET event stream', async () => {
    const noSession = await fetch(`${fixture.server.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(noSession.status).toBe(400);
    const unknown = await fetch(`${fixture.server.url}/mcp`, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': 'does-not-exist' },
    });
    expect(unknown.status).toBe(404);
    const badJson = await fetch(`${fixture.server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: '{"jsonrpc":' });
    expect(badJson.status).toBe(400);
    expect((await badJson.json()).error.code).toBe(-32700);
    const put = await fetch(`${fixture.server.url}/mcp`, { method: 'PUT' });
    expect(put.status).toBe(405);

    const init = await fetch(`${fixture.server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INIT) });
    expect(init.status).toBe(200);
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    const badVersion = await fetch(`${fixture.server.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(badVersion.status).toBe(400);

    // Resumable streams (SEP-1699): a POST stream opens with a priming event carrying an id and the retry delay.
    const listed = await fetch(`${fixture.server.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    const text = await listed.text();
    expect(text).toMatch(/^id: \S+\nretry: 1000\ndata: \n\n/);
    expect(text).toContain('"tools"');

    const controller = new AbortController();
    const stream = await fetch(`${fixture.server.url}/mcp`, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    controller.abort();
    const end = await fetch(`${fixture.server.url}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(end.status).toBe(200);
  });

  it('shares browser sessions with REST for the same caller', async () => {
    const rest = await api(fixture.server.url, 'POST', '/v1/sessions/start');
    const id = rest.json.data.id as string;
    const { client } = await connect(fixture.server.url);
    const nav = (await client.callTool({
      name: 'navigate',
      arguments: { sessionId: id, url: fixture.site.url('/page2.html') },
    })) as CallToolResult;
    expect(nav.isError).toBeFalsy();
    expect((await api(fixture.server.url, 'GET', `/v1/sessions/${id}`)).json.data.url).toBe(fixture.site.url('/page2.html'));
    await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`);
    const listed = (await client.callTool({ name: 'session_list', arguments: {} })) as CallToolResult;
    expect((listed.structuredContent as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id)).not.toContain(id);
    await client.close();
  });
});
