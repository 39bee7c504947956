import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../src/core/tokens.js';
import { useMcpHttpClient } from './fixtures/mcp-http.js';
import { refOf } from './fixtures/refs.js';
import { useSiteHttp } from './fixtures/site-http.js';

const PAGE_READING = ['navigate', 'extract', 'observe', 'act'];
/** Issue 41: structuredContent of the page-reading tools costs at most this many times their text. */
const MOST_STRUCTURED_PER_TEXT = 1.1;

const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

/**
 * A client that hands its model the text content and its program structuredContent pays for the page once: the
 * page-reading tools answer the page in the text, and beside it only the facts a program needs.
 */
describe('MCP structuredContent of the page-reading tools', () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'structured-test' });
  const answers: Array<{ page: string; tool: string; result: CallToolResult }> = [];
  let sessionId: string;

  /** One call, kept with the page it was on; the SDK client has checked structuredContent against the outputSchema. */
  const call = async (page: string, tool: string, args: Record<string, unknown> = {}) => {
    const result = (await mcp.client.callTool({ name: tool, arguments: { sessionId, ...args } })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    answers.push({ page, tool, result });
    return result;
  };

  beforeAll(async () => {
    // Listed first: the 1.x client validates structuredContent against the outputSchemas it has listed.
    const { tools } = await mcp.client.listTools();
    for (const name of PAGE_READING) expect(tools.find((tool) => tool.name === name)?.outputSchema, name).toBeDefined();
    sessionId = ((await mcp.client.callTool({ name: 'session_start', arguments: {} })).structuredContent as { id: string }).id;

    const todo = 'TodoMVC';
    const loaded = textOf(await call(todo, 'navigate', { url: fixture.site.url('/apps/todomvc/react/index.html') }));
    await call(todo, 'observe');
    const field = refOf(loaded, /textbox: New Todo/);
    await call(todo, 'act', { action: { ref: field, method: 'fill', arguments: { value: 'buy oat milk', submit: true } } });
    const listed = textOf(await call(todo, 'extract'));
    await call(todo, 'act', { action: { ref: refOf(listed, /checkbox: buy oat milk/), method: 'click' } });

    const form = 'form';
    const shown = textOf(await call(form, 'navigate', { url: fixture.site.url('/pages/form.html') }));
    await call(form, 'extract');
    await call(form, 'observe');
    await call(form, 'act', { action: { ref: refOf(shown, /textbox: Full name/), method: 'fill', arguments: { value: 'Ada Lovelace' } } });

    const table = 'table';
    await call(table, 'navigate', { url: fixture.site.url('/pages/table.html') });
    await call(table, 'extract');
    await call(table, 'observe');
  });

  it(`answers at most ${MOST_STRUCTURED_PER_TEXT}x the text's tokens on TodoMVC, a form and a table`, () => {
    const over = answers
      .map(({ page, tool, result }) => ({
        page,
        tool,
        text: countTokens(textOf(result)),
        structured: countTokens(JSON.stringify(result.structuredContent)),
      }))
      .filter(({ text, structured }) => structured > text * MOST_STRUCTURED_PER_TEXT);
    expect(over).toEqual([]);
    expect(new Set(answers.map(({ tool }) => tool))).toEqual(new Set(PAGE_READING));
  });

  it('carries where the page is and what the call did, never the page text', () => {
    const [navigated, observed, filled, extracted] = answers;
    expect(navigated!.result.structuredContent).toEqual({
      url: fixture.site.url('/apps/todomvc/react/index.html'),
      status: 200,
      title: 'TodoMVC: React',
    });
    expect(observed!.result.structuredContent).toEqual({ refs: [expect.any(String), expect.any(String)] });
    expect(filled!.result.structuredContent).toEqual({ success: true, pageChanged: true, ref: expect.any(String) });
    expect(textOf(extracted!.result)).toContain('buy oat milk');
    expect(extracted!.result.structuredContent).toEqual({});
    for (const { tool, result } of answers) expect(JSON.stringify(result.structuredContent), tool).not.toContain('todos');
  });

  it('validates against the listed outputSchema in an SDK 2.x client too', async () => {
    const client = new ModernClient({ name: 'structured-test-2', version: '1.0.0' });
    await client.connect(new ModernTransport(new URL(`${fixture.server.url}/mcp`)));
    try {
      await client.listTools();
      const id = (await client.callTool({ name: 'session_start', arguments: {} })).structuredContent as { id: string };
      const args = { sessionId: id.id };
      // The 2.x client throws when structuredContent does not match the outputSchema it listed.
      const loaded = await client.callTool({ name: 'navigate', arguments: { ...args, url: fixture.site.url('/pages/form.html') } });
      expect(loaded.structuredContent).toMatchObject({ status: 200 });
      await client.callTool({ name: 'extract', arguments: args });
      const observed = await client.callTool({ name: 'observe', arguments: args });
      const ref = (observed.structuredContent as { refs: string[] }).refs[0]!;
      const acted = await client.callTool({
        name: 'act',
        arguments: { ...args, action: { ref, method: 'fill', arguments: { value: 'Ada' } } },
      });
      expect(acted.structuredContent).toMatchObject({ success: true, ref });
      await client.callTool({ name: 'session_end', arguments: args });
    } finally {
      await client.close();
    }
  });
});

describe('streaming over MCP: act, extract and observe as REST streams them', () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'streaming-test' });
  let sessionId: string;
  let field: string;

  beforeAll(async () => {
    sessionId = ((await mcp.client.callTool({ name: 'session_start', arguments: {} })).structuredContent as { id: string }).id;
    const loaded = await mcp.client.callTool({ name: 'navigate', arguments: { sessionId, url: fixture.site.url('/pages/form.html') } });
    field = refOf(textOf(loaded as CallToolResult), /textbox: Full name/);
  });

  const calls = (): Array<[string, Record<string, unknown>]> => [
    ['act', { action: { ref: field, method: 'fill', arguments: { value: 'Ada' } } }],
    ['extract', {}],
    ['observe', {}],
  ];

  it('lists no streamResponse (the client asks, not its model) yet takes it wherever REST does', async () => {
    const { tools } = await mcp.client.listTools();
    for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {}), tool.name).not.toContain('streamResponse');
    type Schema = { $ref?: string; properties?: object };
    const openapi = (await (await fetch(`${fixture.server.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
      components: { schemas: Record<string, Schema> };
    };
    const bodyOf = (schema: Schema | undefined) => (schema?.$ref ? openapi.components.schemas[schema.$ref.split('/').pop()!] : schema);
    const streamingRoutes = Object.keys(openapi.paths).filter((path) =>
      Object.values(openapi.paths[path]!).some(
        (route) => 'streamResponse' in (bodyOf(route.requestBody?.content['application/json']?.schema)?.properties ?? {}),
      ),
    );
    expect(streamingRoutes.map((path) => path.split('/').pop())).toEqual(
      expect.arrayContaining(['navigate', 'extract', 'observe', 'act', 'agentExecute']),
    );
  });

  it('sends progress notifications for a progressToken, then the result', async () => {
    for (const [tool, args] of calls()) {
      const heard: string[] = [];
      const result = (await mcp.client.callTool({ name: tool, arguments: { sessionId, streamResponse: true, ...args } }, undefined, {
        onprogress: (progress) => heard.push(progress.message ?? ''),
      })) as CallToolResult;
      expect(result.isError, `${tool}: ${textOf(result)}`).toBeFalsy();
      expect(heard.length, tool).toBeGreaterThan(0);
    }
  });

  it('sends log messages for streamResponse: true without a progressToken, before the result', async () => {
    const heard: string[] = [];
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      heard.push(String((notification.params.data as { stage?: string }).stage));
    });
    for (const [tool, args] of calls()) {
      heard.length = 0;
      const result = (await mcp.client.callTool({ name: tool, arguments: { sessionId, streamResponse: true, ...args } })) as CallToolResult;
      expect(result.isError, `${tool}: ${textOf(result)}`).toBeFalsy();
      // The server sends its notifications before the result, on the same stream.
      expect(heard.length, tool).toBeGreaterThan(0);
    }
  });
});
