import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listedInput, operations } from '../src/core/operations/index.js';
import { toJsonSchema } from '../src/core/validation.js';
import { buildTools } from '../src/mcp/tools.js';
import { errorCode, startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { api } from './http-fixture.js';

/** JSON Schema keywords that bound a value. */
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems'];
/** Bounds that say nothing: zod's safe-integer range, and "not empty". */
const silent = (key: string, value: unknown) =>
  ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) ||
  (key === 'minLength' && value === 1);

/** Every bound in a JSON Schema, as `path keyword=value`. */
function boundsOf(schema: unknown, path = '', out: string[] = []): string[] {
  if (!schema || typeof schema !== 'object') return out;
  if (Array.isArray(schema)) {
    schema.forEach((item, i) => boundsOf(item, `${path}[${i}]`, out));
    return out;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (BOUNDS.includes(key) && !silent(key, value)) out.push(`${path} ${key}=${String(value)}`);
    if (key === 'properties') for (const [name, field] of Object.entries(value as object)) boundsOf(field, `${path}.${name}`, out);
    else if (typeof value === 'object') boundsOf(value, `${path}/${key}`, out);
  }
  return out;
}

type Schema = { properties: Record<string, Record<string, unknown>> };
const field = (tools: Tool[], tool: string, name: string) => (tools.find((t) => t.name === tool)!.inputSchema as Schema).properties[name]!;

describe('tools/list states every bound the server enforces (issue 39 item 10)', () => {
  it('drops none of the bounds of the schemas the server validates with', () => {
    const config = { sessionIdleTimeoutMs: 900_000 };
    const listed = new Map(buildTools(operations, config).map((tool) => [tool.name, tool.listing.inputSchema]));
    for (const tool of buildTools(operations, config)) {
      const [host] = tool.operations;
      const full = boundsOf(toJsonSchema(listedInput(host!, config), 'input'));
      expect(boundsOf(listed.get(tool.name)), host!.name).toEqual(expect.arrayContaining(full));
    }
  });

  describe('over MCP', () => {
    let stdio: StdioServer;
    let tools: Tool[];
    beforeAll(async () => {
      stdio = await startStdioServer();
      tools = (await stdio.client.listTools()).tools;
    }, 180_000);
    afterAll(() => stdio.close());

    it('session_start says timeoutMs is at most the idle timeout (900000 by default), and refuses 900001 with invalid_argument', async () => {
      expect(field(tools, 'session_start', 'timeoutMs')).toMatchObject({ type: 'integer', minimum: 1000, maximum: 900_000 });
      const over = await stdio.call('session_start', { timeoutMs: 900_001 });
      expect(errorCode(over)).toBe('invalid_argument');
      expect((over.content[0] as { text: string }).text).toMatch(/timeoutMs: at most 900000/);
      const viewport = field(tools, 'session_start', 'viewport') as unknown as Schema;
      expect(viewport.properties.width).toMatchObject({ type: 'integer', minimum: 200, maximum: 4096 });
      expect(errorCode(await stdio.call('session_start', { viewport: { width: 4097, height: 800 } }))).toBe('invalid_argument');
      expect(field(tools, 'session_start', 'blockUrls')).toMatchObject({ maxItems: 50 });
    });

    it('act, evaluate, live_view and agent_execute state their bounds, and a value just over one is invalid_argument', async () => {
      const sessionId = 'none';
      expect(field(tools, 'act', 'timeoutMs')).toMatchObject({ minimum: 1, maximum: 120_000 });
      expect(errorCode(await stdio.call('act', { sessionId, action: { method: 'reload' }, timeoutMs: 120_001 }))).toBe('invalid_argument');
      expect(field(tools, 'act', 'actions')).toMatchObject({ minItems: 1, maxItems: 50 });
      // The arguments of each method are one object in the schema: their bounds are in the description.
      expect(tools.find((tool) => tool.name === 'act')!.description).toMatch(
        /press \{key, times\? ≤100\}.*wait \{text \| textGone \| ms ≤30000\}/,
      );
      expect(field(tools, 'evaluate', 'expression')).toMatchObject({ maxLength: 100_000 });
      expect(errorCode(await stdio.call('evaluate', { sessionId, expression: 'x'.repeat(100_001) }))).toBe('invalid_argument');
      expect(field(tools, 'live_view', 'expiresInMs')).toMatchObject({ minimum: 1000, maximum: 43_200_000 });
      expect(errorCode(await stdio.call('live_view', { sessionId, expiresInMs: 43_200_001 }))).toBe('invalid_argument');
      const options = (field(tools, 'agent_execute', 'executeOptions').anyOf as Schema[])[1]!;
      expect(options.properties.maxSteps).toMatchObject({ minimum: 1, maximum: 200 });
      // The Python client's snake_case twins are accepted but not listed: a model needs one name for each.
      expect(options.properties.max_steps).toBeUndefined();
      const tooMany = { sessionId, executeOptions: { instruction: 'x', maxSteps: 201 } };
      expect(errorCode(await stdio.call('agent_execute', tooMany))).toBe('invalid_argument');
      const snake = { sessionId, executeOptions: { instruction: 'x', max_steps: 201 } };
      expect(errorCode(await stdio.call('agent_execute', snake))).toBe('invalid_argument');
    });

    it("a method's argument past its bound is refused with invalid_argument naming it", async () => {
      const sessionId = ((await stdio.call('session_start', {})).structuredContent as { id: string }).id;
      const pressed = await stdio.call('act', { sessionId, action: { method: 'press', arguments: { key: 'Tab', times: 101 } } });
      expect(errorCode(pressed)).toBe('invalid_argument');
      expect((pressed.content[0] as { text: string }).text).toMatch(/arguments\.times/);
      await stdio.call('session_end', { sessionId });
    });
  });

  it("lists the operator's --session-idle-timeout as timeoutMs's maximum, and takes a value at it", async () => {
    const stdio = await startStdioServer(['--session-idle-timeout', '60000']);
    try {
      const tools = (await stdio.client.listTools()).tools;
      expect(field(tools, 'session_start', 'timeoutMs')).toMatchObject({ minimum: 1000, maximum: 60_000 });
      expect(errorCode(await stdio.call('session_start', { timeoutMs: 60_001 }))).toBe('invalid_argument');
      const started = await stdio.call('session_start', { timeoutMs: 60_000 });
      expect(started.isError).toBeFalsy();
      await stdio.call('session_end', { sessionId: (started.structuredContent as { id: string }).id });
    } finally {
      await stdio.close();
    }
  }, 180_000);

  describe('over REST', () => {
    const fixture = useSiteHttp();
    it('refuses session_start timeoutMs just over the idle timeout with 400 invalid_argument', async () => {
      const over = await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: { timeoutMs: 900_001 } });
      expect([over.status, over.json.error.code]).toEqual([400, 'invalid_argument']);
    });
  });
});
