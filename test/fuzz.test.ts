import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { silentLogger } from '../src/core/logger.js';
import { operations, type AnyOperation } from '../src/core/operations/index.js';
import { BrowserService } from '../src/core/service.js';
import { buildTools } from '../src/mcp/tools.js';
import { useMcpHttpClient } from './fixtures/mcp-http.js';
import type { SiteServer } from './fixtures/site-server.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { within } from './fixtures/within.js';

const SEED = 1_1_2026;
/** Generated calls per REST route and per operation over MCP. */
const RUNS = 20;
/**
 * Longest any one fuzzed call may take: everything it can reach is local or refused, and the longest waits it can ask
 * for (a 10 s press and hold, evaluate's default 10 s) stay under it; a call past it is a hang.
 */
const CALL_BOUND_MS = 30_000;

/** One REST route of an operation: its own path, or a former path still served (`rest.aliases`). */
interface RestTarget {
  operation: AnyOperation;
  method: 'GET' | 'POST';
  path: string;
}

/** One operation over MCP: its own tool, or the tool it is folded into, called with `operation: "<name>"`. */
interface McpTarget {
  operation: AnyOperation;
  tool: string;
}

/** What is fuzzed, generated from the operation table: every operation's routes, and every operation over MCP. */
const REST_TARGETS: RestTarget[] = operations.flatMap((operation) => [
  { operation, method: operation.rest.method, path: operation.rest.path },
  ...(operation.rest.aliases ?? []).map((alias) => ({ operation, method: operation.rest.method, path: alias.path })),
]);
const TOOLS = buildTools();
const MCP_TARGETS: McpTarget[] = operations.map((operation) => ({
  operation,
  tool: TOOLS.find((tool) => tool.operations.includes(operation))!.name,
}));

const routeOf = (target: { method: string; path: string }) => `${target.method} ${target.path}`;

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

/** Mostly a plausible value, sometimes a hostile one. */
function mostly(plausible: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: plausible, weight: 8 }, { arbitrary: hostileValue(), weight: 1 });
}

/**
 * Plausible or hostile values for the fields operations know, so a generated call often passes validation and reaches
 * the core. A field no entry names (a new operation's) gets a hostile or a plain value: every field of every operation
 * is fuzzed, these only go deeper.
 */
function knownFields(site: SiteServer): Record<string, fc.Arbitrary<unknown>> {
  const plain = fc.oneof(fc.string({ maxLength: 30 }), fc.integer({ min: -10, max: 70_000 }), fc.boolean());
  /** Times a call waits: small, so a valid one stays well under CALL_BOUND_MS; out of range and hostile ones too. */
  const time = mostly(fc.integer({ min: -5, max: 3_000 }));
  const url = mostly(
    fc.constantFrom(
      site.url('/index.html'),
      site.url('/pages/form.html'),
      site.url('/act/orders.html'),
      'javascript:alert(1)',
      'file:///etc/passwd',
      'about:blank',
      'http://',
    ),
  );
  const selector = mostly(
    fc.oneof(
      plain,
      fc.constantFrom(
        '//h1',
        'xpath=//body',
        '//*[',
        '(//a)[99]',
        'text=Go',
        'css=body >> _react=X',
        '*internal:text="x"',
        'css=[',
        'role=button >> nth=0',
      ),
    ),
  );
  const ref = mostly(fc.oneof(plain, fc.constantFrom('1', '2', '3', '0-3', '999', '[4]')));
  const actArguments = mostly(
    fc.record(
      {
        value: mostly(plain),
        text: mostly(fc.string({ maxLength: 30 })),
        key: mostly(fc.constantFrom('Enter', 'Control+A', 'NotAKey', 'a')),
        url,
        direction: mostly(fc.constantFrom('up', 'down')),
        screens: mostly(fc.double({ min: -1, max: 30, noNaN: true })),
        targetSelector: selector,
        targetRef: ref,
        position: mostly(fc.record({ x: fc.double(), y: fc.double() })),
        values: mostly(fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 })),
        tabId: mostly(fc.constantFrom('t0', 't1', 't9')),
        delay: time,
        times: mostly(fc.integer({ min: -1, max: 5 })),
        occurrence: mostly(fc.integer({ min: -1, max: 5 })),
        files: hostileValue(),
      },
      { requiredKeys: [] },
    ),
  );
  // Well-formed actions on the site's pages, so most reach the page: one target, the method's own arguments.
  const target = fc.oneof(
    fc.record({ ref }),
    fc.record({ selector }),
    fc.record({ x: fc.integer({ min: -10, max: 1_400 }), y: fc.integer({ min: -10, max: 900 }) }),
    fc.constant({}),
  );
  const words = fc.string({ maxLength: 30 });
  const wellFormed = fc.oneof(
    fc.tuple(target, fc.constantFrom('click', 'dblclick', 'hover', 'check')).map(([on, method]) => ({ ...on, method })),
    fc.tuple(target, words).map(([on, value]) => ({ ...on, method: 'fill', arguments: { value } })),
    fc.tuple(target, words).map(([on, text]) => ({ ...on, method: 'type', arguments: { text } })),
    fc
      .tuple(target, fc.constantFrom('Enter', 'Tab', 'Control+A', 'NotAKey'))
      .map(([on, key]) => ({ ...on, method: 'press', arguments: { key } })),
    fc.tuple(target, fc.constantFrom('up', 'down')).map(([on, direction]) => ({ ...on, method: 'scroll', arguments: { direction } })),
    fc.tuple(target, words).map(([on, text]) => ({ ...on, method: 'selectText', arguments: { text } })),
    fc.tuple(target, selector).map(([on, targetSelector]) => ({ ...on, method: 'dragTo', arguments: { targetSelector } })),
    fc.constantFrom('back', 'forward', 'reload').map((method) => ({ method })),
    url.map((to) => ({ method: 'newTab', arguments: { url: to } })),
    fc.constantFrom('t0', 't1', 't9').map((tabId) => ({ method: 'selectTab', arguments: { tabId } })),
    // `wait` only with ms: a wait for text that never comes lasts its whole timeout, by design.
    time.map((ms) => ({ method: 'wait', arguments: { ms } })),
  );
  const action = mostly(
    fc.oneof(
      { arbitrary: wellFormed, weight: 3 },
      fc.record(
        {
          method: mostly(
            fc.constantFrom(
              ...['click', 'dblclick', 'hover', 'fill', 'type', 'press', 'scroll', 'dragTo', 'selectOption', 'selectText', 'check'],
              ...['upload', 'back', 'forward', 'reload', 'newTab', 'selectTab', 'closeTab'],
            ),
          ),
          ref,
          selector,
          x: mostly(fc.integer({ min: -10, max: 1_400 })),
          y: mostly(fc.integer({ min: -10, max: 900 })),
          arguments: actArguments,
        },
        { requiredKeys: ['method'] },
      ),
    ),
  );
  return {
    url,
    options: mostly(
      fc.record({ timeout: time, waitUntil: mostly(fc.constantFrom('load', 'commit', 'networkidle')) }, { requiredKeys: [] }),
    ),
    frameId: mostly(fc.constantFrom('0', '0-1', '1')),
    instruction: mostly(plain),
    schema: mostly(fc.constantFrom({ type: 'object', properties: { a: { type: 'string' } } }, { type: 'array' }, { $ref: '#/x' })),
    selector,
    ref,
    iframes: mostly(fc.boolean()),
    maxTokens: mostly(fc.integer({ min: -1, max: 5_000 })),
    cursor: mostly(plain),
    modelClientOptions: mostly(fc.record({ timeout: plain, baseURL: plain, apiKey: plain }, { requiredKeys: [] })),
    agentConfig: mostly(
      fc.constantFrom({}, { provider: 'openai' }, { model: 'anthropic/claude' }, { integrations: ['http://127.0.0.1:1/'] }),
    ),
    executeOptions: mostly(
      fc.oneof(words, fc.record({ instruction: words, maxSteps: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] })),
    ),
    streamResponse: fc.boolean(),
    pageText: mostly(fc.boolean()),
    action,
    actions: mostly(fc.array(action, { minLength: 1, maxLength: 3 })),
    variables: mostly(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }),
        fc.oneof(words, fc.record({ value: words, origins: fc.oneof(hostileValue(), fc.constant([site.url('/').slice(0, -1)])) })),
        { maxKeys: 3 },
      ),
    ),
    timeoutMs: time,
    settleMs: time,
    domSettleTimeoutMs: time,
    expression: mostly(
      fc.oneof(
        plain,
        fc.constantFrom('1 + 1', 'document.title', '() => { throw new Error("x") }', '(a) => a', 'new Promise(() => {})', '1 +'),
      ),
    ),
    arg: hostileValue(),
    fullPage: mostly(fc.boolean()),
    format: mostly(fc.constantFrom('png', 'jpeg')),
    quality: mostly(fc.integer({ min: -1, max: 101 })),
    annotate: mostly(fc.boolean()),
    interactive: mostly(fc.boolean()),
    expiresInMs: mostly(fc.constantFrom(1_000, 60_000, 0)),
    takeover: mostly(fc.boolean()),
    name: mostly(fc.constantFrom('fuzz', 'a/b', '..', '')),
    saveProfile: mostly(fc.constantFrom('fuzz', '')),
    indexedDB: mostly(fc.boolean()),
    storageState: mostly(fc.constant({ cookies: [], origins: [] })),
    profile: mostly(fc.constantFrom('fuzz', 'missing')),
    unknownField: hostileValue(),
  };
}

/**
 * An object with a few of the fields `fields` names (so it often passes validation and reaches the core), each with a
 * plausible or a hostile value, now and then beside an unknown field; `always` fields are always there.
 */
function hostileObject(
  known: Record<string, fc.Arbitrary<unknown>>,
  fields: string[],
  always: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<Record<string, unknown>> {
  const arbitraries = Object.fromEntries(
    fields.map((field) => [field, known[field] ?? fc.oneof(hostileValue(), fc.string({ maxLength: 30 }), fc.integer(), fc.boolean())]),
  );
  const some = fields.length
    ? fc
        .uniqueArray(fc.constantFrom(...fields), { maxLength: 2 })
        .chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, arbitraries[key]!]))))
    : fc.constant({});
  const extra = fc.oneof({ arbitrary: fc.constant({}), weight: 5 }, { arbitrary: fc.record({ unknownField: hostileValue() }), weight: 1 });
  const kept = fc.record(always);
  return fc.tuple(some, extra, kept).map(([picked, unknown, given]) => ({ ...picked, ...unknown, ...given }) as Record<string, unknown>);
}

/** A GET route's input as a query string: values as JSON, each cut to 2,000 characters (a URL has a size limit). */
function query(input: unknown): string {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(input))
    params.set(key, (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).slice(0, 2_000));
  const text = params.toString();
  return text ? `?${text}` : '';
}

describe('fuzz: generated input at every operation of the table, through REST and MCP', () => {
  const profileDir = mkdtempSync(join(tmpdir(), 'fuzz-profiles-'));
  // No model keys: extract with an instruction and the agent stop at model_not_configured, never leave the machine. A
  // takeover link nobody opens hands the page back at once, so the fixed session is not held for a minute.
  const fixture = useSiteHttp(
    {},
    () =>
      new BrowserService({
        logger: silentLogger(),
        env: {},
        maxSessions: 6,
        liveView: { takeoverFirstViewerMs: 300 },
        profiles: { dir: join(profileDir, 'profiles'), secret: 'fuzz-profile-secret', keyFile: join(profileDir, 'profile.key') },
      }),
  );
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'fuzz' });
  let restSession: string;
  let mcpSession: string;
  let known: Record<string, fc.Arbitrary<unknown>>;

  beforeAll(async () => {
    known = knownFields(fixture.site);
    restSession = (await (await fetch(`${fixture.server.url}/v1/sessions/start`, { method: 'POST' })).json()).data.id;
    mcpSession = ((await mcp.client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult).structuredContent!.id as string;
  });

  afterAll(() => rmSync(profileDir, { recursive: true, force: true }));

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

  /** session_end only gets other ids, so the fixed session stays for the other calls. */
  const endsSession = (operation: AnyOperation) => operation.name === 'session_end';

  it("fuzzes exactly the table's operations: every REST route the OpenAPI document lists, every MCP tool and folded operation", async () => {
    const names = operations.map((operation) => operation.name).sort();
    expect(MCP_TARGETS.map((target) => target.operation.name).sort()).toEqual(names);
    expect([...new Set(REST_TARGETS.map((target) => target.operation.name))].sort()).toEqual(names);
    // The server's own listings, not the table: a route or tool the table did not generate would be missing here.
    const openapi = (await (await fetch(`${fixture.server.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const served = Object.entries(openapi.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // The health check and the document describing the API are routes of their own, no operations.
    const notOperations = ['GET /healthz', 'GET /v1/openapi.json'];
    expect(REST_TARGETS.map(routeOf).sort()).toEqual(served.filter((route) => !notOperations.includes(route)).sort());
    const { tools } = await mcp.client.listTools();
    const reachable = tools.flatMap((tool) => {
      const folded = (tool.inputSchema.properties?.operation as { enum?: string[] } | undefined)?.enum ?? [];
      return [tool.name, ...folded];
    });
    expect(MCP_TARGETS.map((target) => target.operation.name).sort()).toEqual([...new Set(reachable)].sort());
  });

  /**
   * The fields a call of the operation nearly always carries, so most calls get past them: those it must give (navigate's
   * url) and those of its example in the table (act's action), each generated, or as in the example.
   */
  const leading = (operation: AnyOperation): Record<string, fc.Arbitrary<unknown>> => {
    const example = operation.example ?? {};
    const required = Object.entries(operation.input.shape).filter(([, schema]) => !(schema as z.ZodType).safeParse(undefined).success);
    const fields = new Set([...required.map(([field]) => field), ...Object.keys(example)]);
    return Object.fromEntries(
      [...fields].map((field) => {
        const generated = known[field] ?? hostileValue();
        return [
          field,
          field in example
            ? fc.oneof({ arbitrary: generated, weight: 3 }, { arbitrary: fc.constant(example[field]), weight: 1 })
            : generated,
        ];
      }),
    );
  };

  it('REST: no 500, no hang, no crash, no leaked context, at every route', async () => {
    const called = new Set<string>();
    for (const target of REST_TARGETS) {
      const fields = Object.keys(target.operation.input.shape);
      const body = fc.oneof(
        { arbitrary: hostileObject(known, fields, leading(target.operation)), weight: 6 },
        { arbitrary: hostileValue(), weight: 1 },
        { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }), weight: 1 },
      );
      const id = fc.oneof(
        { arbitrary: fc.constant(restSession), weight: 4 },
        { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent), weight: 1 },
      );
      await fc.assert(
        fc.asyncProperty(body, id, fc.boolean(), async (value, pathId, raw) => {
          const sessionId = endsSession(target.operation) && pathId === restSession ? 'not-a-session' : pathId;
          const get = target.method === 'GET';
          const text = raw && typeof value === 'string' ? value : JSON.stringify(value);
          const path = target.path.replace('{id}', sessionId) + (get ? query(value) : '');
          const what = `${target.method} ${path.slice(0, 200)}`;
          called.add(routeOf(target));
          const res = await within(
            fetch(fixture.server.url + path, {
              method: target.method,
              headers: get ? {} : { 'content-type': 'application/json' },
              body: get ? undefined : text,
            }),
            CALL_BOUND_MS,
            what,
          );
          const type = res.headers.get('content-type') ?? '';
          const answer = Buffer.from(await within(res.arrayBuffer(), CALL_BOUND_MS, `${what} body`));
          expect(res.status, `${what} ${text.slice(0, 200)}`).toBeLessThan(500);
          if (type.includes('text/event-stream')) {
            expect(answer.toString()).toMatch(/event: (finished|error)/);
            expect(answer.toString()).not.toMatch(/"code":"internal"/);
          } else if (!type.includes('application/json')) {
            // Bytes (a screenshot, a trace) are a success, in a media type the operation declares.
            expect(res.status).toBe(200);
            expect(target.operation.binary?.mediaTypes).toContain(type.split(';')[0]);
          } else {
            const json = JSON.parse(answer.toString());
            expect(typeof json.success).toBe('boolean');
            if (target.operation.name === 'session_start') await endStarted(json);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    }
    expect([...called].sort()).toEqual(REST_TARGETS.map(routeOf).sort());
    await expectStillHealthy();
  }, 600_000);

  it('MCP over /mcp: every operation answers a result or a clear error, never internal, never a hang', async () => {
    const called = new Set<string>();
    for (const target of MCP_TARGETS) {
      const fields = Object.keys(target.operation.input.shape);
      const always = leading(target.operation);
      if (target.operation.session !== false) always.sessionId = mostly(fc.constant(null).map(() => mcpSession));
      await fc.assert(
        fc.asyncProperty(hostileObject(known, fields, always), async (args) => {
          if (endsSession(target.operation) && args.sessionId === mcpSession) args.sessionId = 'not-a-session';
          // A folded operation is reached through its host tool, as a client calls it.
          if (target.tool !== target.operation.name) args.operation = target.operation.name;
          called.add(target.operation.name);
          const call = mcp.client.callTool({ name: target.tool, arguments: args }).catch((err: Error) => {
            // Arguments over the 1 MiB body limit are refused before MCP sees them: a clear JSON-RPC error with HTTP 413.
            if (/larger than the limit/.test(err.message)) return undefined;
            throw err;
          });
          const result = (await within(call, CALL_BOUND_MS, `tools/call ${target.tool} ${target.operation.name}`)) as
            CallToolResult | undefined;
          if (!result) return;
          if (result.isError) {
            const code = (result._meta?.error as { code?: string } | undefined)?.code;
            expect(code, `${target.operation.name} ${JSON.stringify(args).slice(0, 200)}`).toBeTypeOf('string');
            expect(code).not.toBe('internal');
          } else if (target.operation.name === 'session_start') {
            const id = (result.structuredContent as { id: string }).id;
            await mcp.client.callTool({ name: 'session_end', arguments: { sessionId: id } });
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    }
    expect([...called].sort()).toEqual(MCP_TARGETS.map((target) => target.operation.name).sort());
    await expectStillHealthy();
  }, 600_000);
});
