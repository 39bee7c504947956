import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { useMcpHttpClient } from './fixtures/mcp-http.js';
import type { SiteServer } from './fixtures/site-server.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { within } from './fixtures/within.js';

const SEED = 1_1_2026;
const RUNS = 20;
/** Longest any one fuzzed call may take: everything it can reach is local or refused. */
const CALL_BOUND_MS = 15_000;

/** A JSON value, or the shapes that break servers: wrong types, huge and control-character strings, deep nesting. */
function hostileValue(): fc.Arbitrary<unknown> {
  const controlString = fc.string({ unit: 'binary', maxLength: 40 });
  const huge = fc.integer({ min: 50_000, max: 300_000 }).map((n) => 'A\u0000\u202e'.repeat(Math.floor(n / 3)));
  const deep = fc.integer({ min: 90, max: 400 }).map((depth) => {
    let value: unknown = 'bottom';
    for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { nested: value };
    return value;
  });
  const numbers = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-5, 0, -0, 1e308, Number.MAX_SAFE_INTEGER + 2));
  return fc.oneof(fc.jsonValue({ maxDepth: 4 }), controlString, huge, deep, numbers, fc.constantFrom(null, true, [], {}, ''));
}

/**
 * An object with a few fields a route or tool knows (so it often passes validation and reaches the core), each with
 * a plausible or a hostile value, sometimes beside an unknown field.
 */
function hostileObject(site: SiteServer, sessionId: () => string): fc.Arbitrary<Record<string, unknown>> {
  const value = hostileValue();
  const plausible = fc.oneof(value, fc.string({ maxLength: 30 }), fc.integer({ min: -10, max: 70_000 }), fc.boolean());
  const fields: Record<string, fc.Arbitrary<unknown>> = {
    sessionId: fc.oneof(
      value,
      fc.constant(null).map(() => sessionId()),
    ),
    url: fc.oneof(
      value,
      fc.constantFrom(
        site.url('/index.html'),
        site.url('/pages/form.html'),
        'javascript:alert(1)',
        'file:///etc/passwd',
        'about:blank',
        'http://',
      ),
    ),
    options: fc.oneof(
      value,
      fc.record({ timeout: plausible, waitUntil: fc.oneof(plausible, fc.constantFrom('load', 'commit')) }, { requiredKeys: [] }),
    ),
    frameId: fc.oneof(plausible, fc.constantFrom('0', '0-1')),
    instruction: plausible,
    schema: fc.oneof(value, fc.constantFrom({ type: 'object', properties: { a: { type: 'string' } } }, { type: 'array' }, { $ref: '#/x' })),
    selector: fc.oneof(plausible, fc.constantFrom('//h1', 'xpath=//body', '//*[', '(//a)[99]')),
    iframes: plausible,
    modelName: plausible,
    modelClientOptions: fc.oneof(value, fc.record({ timeout: plausible, baseURL: plausible, apiKey: plausible }, { requiredKeys: [] })),
    agentConfig: value,
    executeOptions: fc.oneof(value, fc.record({ instruction: plausible, maxSteps: plausible }, { requiredKeys: [] })),
    streamResponse: fc.boolean(),
    unknownField: value,
  };
  return fc
    .uniqueArray(fc.constantFrom(...Object.keys(fields)), { maxLength: 3 })
    .chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, fields[key]!]))))
    .map((record) => record as Record<string, unknown>);
}

describe('fuzz: generated bodies at every REST route and MCP tool', () => {
  // No model keys: extract with an instruction and the agent stop at model_not_configured, never leave the machine.
  const fixture = useSiteHttp({}, () => new BrowserService({ logger: silentLogger(), env: {}, maxSessions: 6 }));
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'fuzz' });
  let restSession: string;
  let mcpSession: string;

  beforeAll(async () => {
    restSession = (await (await fetch(`${fixture.server.url}/v1/sessions/start`, { method: 'POST' })).json()).data.id;
    mcpSession = ((await mcp.client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult).structuredContent!.id as string;
  });

  /** Sessions a fuzzed call started are ended at once, so the pool never fills. */
  async function endStarted(body: unknown): Promise<void> {
    const id = (body as { data?: { id?: unknown } } | undefined)?.data?.id;
    if (typeof id === 'string' && id !== restSession) await fetch(`${fixture.server.url}/v1/sessions/${id}/end`, { method: 'POST' });
  }

  async function expectStillHealthy(): Promise<void> {
    expect((await fetch(`${fixture.server.url}/healthz`)).status).toBe(200);
    // Every open session has exactly one browser context; none is left behind by a refused or failed call.
    const contexts = (await fixture.server.service.browser.get()).contexts().length;
    expect(contexts).toBe(fixture.server.service.sessions.size);
  }

  it('REST: no 500, no hang, no crash, no leaked context', async () => {
    const paths = [
      ['POST', '/v1/sessions/start'],
      ['GET', '/v1/sessions'],
      ['GET', '/v1/sessions/{id}'],
      ['POST', '/v1/sessions/{id}/navigate'],
      ['POST', '/v1/sessions/{id}/extract'],
      ['POST', '/v1/sessions/{id}/agentExecute'],
      ['POST', '/v1/sessions/{other}/end'],
    ] as const;
    const body = fc.oneof(
      { arbitrary: hostileObject(fixture.site, () => restSession), weight: 6 },
      { arbitrary: hostileValue(), weight: 1 },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }), weight: 1 },
    );
    const id = fc.oneof(
      { arbitrary: fc.constant(restSession), weight: 4 },
      { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), body, id, fc.boolean(), async ([method, template], value, pathId, raw) => {
        // The end route only gets random ids, so the fixed session stays for the other routes.
        const path = template.replace('{id}', pathId).replace('{other}', pathId === restSession ? 'not-a-session' : pathId);
        const text = raw && typeof value === 'string' ? value : JSON.stringify(value);
        const res = await within(
          fetch(fixture.server.url + path, {
            method,
            headers: { 'content-type': 'application/json' },
            body: method === 'GET' ? undefined : text,
          }),
          CALL_BOUND_MS,
          `${method} ${path}`,
        );
        const answer = await within(res.text(), CALL_BOUND_MS, `${method} ${path} body`);
        expect(res.status, `${method} ${path} ${text.slice(0, 200)}`).toBeLessThan(500);
        if (res.headers.get('content-type')?.includes('text/event-stream')) {
          expect(answer).toMatch(/event: (finished|error)/);
          expect(answer).not.toMatch(/"code":"internal"/);
        } else {
          const json = JSON.parse(answer);
          expect(typeof json.success).toBe('boolean');
          if (path.endsWith('/start')) await endStarted(json);
        }
      }),
      { seed: SEED, numRuns: RUNS * paths.length, endOnFailure: true },
    );
    await expectStillHealthy();
  }, 120_000);

  it('MCP over /mcp: every tool answers a result or a clear error, never internal, never a hang', async () => {
    const tools = ['session_start', 'session_list', 'navigate', 'extract', 'agent_execute', 'session_end'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...tools),
        hostileObject(fixture.site, () => mcpSession),
        async (name, args) => {
          // session_end only gets other ids, so the fixed session stays for the other tools.
          if (name === 'session_end' && args.sessionId === mcpSession) args.sessionId = 'not-a-session';
          const call = mcp.client.callTool({ name, arguments: args }).catch((err: Error) => {
            // Arguments over the 1 MiB body limit are refused before MCP sees them: a clear JSON-RPC error with HTTP 413.
            if (/larger than the limit/.test(err.message)) return undefined;
            throw err;
          });
          const result = (await within(call, CALL_BOUND_MS, `tools/call ${name}`)) as CallToolResult | undefined;
          if (!result) return;
          if (result.isError) {
            const code = (result._meta?.error as { code?: string } | undefined)?.code;
            expect(code, `${name} ${JSON.stringify(args).slice(0, 200)}`).toBeTypeOf('string');
            expect(code).not.toBe('internal');
          } else if (name === 'session_start') {
            const id = (result.structuredContent as { id: string }).id;
            await mcp.client.callTool({ name: 'session_end', arguments: { sessionId: id } });
          }
        },
      ),
      { seed: SEED, numRuns: RUNS * tools.length, endOnFailure: true },
    );
    await expectStillHealthy();
  }, 120_000);
});
