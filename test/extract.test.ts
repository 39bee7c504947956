import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import type { OperationInfo } from '../src/client/result.js';
import { ServiceError } from '../src/core/errors.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { errorCode, startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

// The three extract forms through real Chromium, over MCP stdio and the library, with the fake model server behind the real SDKs.
const OPENAI_KEY = 'sk-extract-test-0001';
let site: SiteServer;
let fake: FakeLLM;
let mcp: StdioServer;
let sessionId: string;
let library: BrowserSessions;
let session: BrowserSession;

const productsSchema = {
  type: 'object',
  properties: {
    products: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, price: { type: 'number' }, url: { type: 'string', format: 'uri' } },
        required: ['name', 'url'],
      },
    },
  },
  required: ['products'],
};

/** The refs the page text gave to the links named `names`, read from the text the model was sent. */
function refsIn(text: string, ...names: string[]): string[] {
  return names.map((name) => new RegExp(`\\[${name}\\]\\(([\\w-]+)\\)`).exec(text)?.[1] ?? `missing ${name}`);
}

function sentText(i = 0): string {
  return JSON.stringify(fake.requests[i]!.body.messages ?? fake.requests[i]!.body);
}

/** An object schema `levels` objects deep: {type:object, properties:{a:{type:object, properties:{a: ...}}}}. */
function deepSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

beforeAll(async () => {
  [site, fake] = await Promise.all([startSiteServer(), startFakeLLM()]);
  const env = {
    OPENAI_API_KEY: OPENAI_KEY,
    ANTHROPIC_API_KEY: '',
    OPENAI_BASE_URL: fake.openaiBaseURL,
    ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
  };
  mcp = await startStdioServer(['--model', 'openai/gpt-4.1-mini'], env);
  sessionId = (await mcp.call('session_start')).structuredContent!.id as string;
  await mcp.call('navigate', { sessionId, url: site.url('/extract/products.html') });
  library = new BrowserSessions({ model: 'openai/gpt-4.1-mini', env });
  session = await library.startSession();
  await session.navigate(site.url('/extract/products.html'));
});

afterAll(async () => {
  await Promise.allSettled([mcp?.close(), library?.close()]);
  await Promise.allSettled([site?.close(), fake?.close()]);
});

beforeEach(() => fake.reset());

describe('extract over MCP stdio', () => {
  it('is listed with an output schema and a read-only annotation', async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name === 'extract')!;
    expect(tool.outputSchema).toBeDefined();
    expect(tool.annotations).toMatchObject({ readOnlyHint: true });
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining([
        'sessionId',
        'instruction',
        'schema',
        'selector',
        'iframes',
        'modelName',
        'modelClientOptions',
        'domSettleTimeoutMs',
      ]),
    );
  });

  it('with no arguments returns the page text without calling a model', async () => {
    const result = await mcp.call('extract', { sessionId });
    expect(result.isError).toBeFalsy();
    const pageText = (result.content[0] as { text: string }).text;
    expect(result.structuredContent).toEqual({});
    expect(pageText).toContain('Red apple');
    expect(pageText).toContain('Cherries at half price today.');
    expect(refsIn(pageText, 'Red apple')[0]).not.toMatch(/missing/);
    expect(result._meta?.usage).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
  });

  it('with an instruction returns {extraction} and the usage in _meta', async () => {
    fake.enqueue({ text: 'Three fruits: apple, pear, plum.', usage: { input: 321, output: 9 } });
    const result = await mcp.call('extract', { sessionId, instruction: 'Which fruits are sold?' });
    expect(result.structuredContent).toEqual({ extraction: 'Three fruits: apple, pear, plum.' });
    expect(result._meta?.usage).toMatchObject({ input_tokens: 321, output_tokens: 9, inference_time_ms: expect.any(Number) });
    expect(fake.requests[0]!.body.model).toBe('gpt-4.1-mini');
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(sentText()).toContain('Which fruits are sold?');
    expect(sentText()).toContain('Blue plum');
  });

  it("with a schema returns validated data whose links are the page's real hrefs", async () => {
    fake.fallback = (request) => {
      const [apple, pear, plum] = refsIn(JSON.stringify(request.body.messages), 'Red apple', 'Green pear', 'Blue plum');
      return {
        json: {
          products: [
            { name: 'Red apple', price: 3, url: apple },
            { name: 'Green pear', price: 4, url: pear },
            { name: 'Blue plum', price: 5, url: plum },
          ],
        },
      };
    };
    const result = await mcp.call('extract', { sessionId, instruction: 'List the products', schema: productsSchema });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      products: [
        { name: 'Red apple', price: 3, url: site.url('/extract/apple.html') },
        { name: 'Green pear', price: 4, url: site.url('/extract/pear.html?ref=list') },
        { name: 'Blue plum', price: 5, url: 'https://fruit.invalid/plum' },
      ],
    });
    expect(fake.requests[0]!.body.response_format.type).toBe('json_schema');
  });

  it('sends the validation errors back to the model and fails with extraction_invalid after two retries', async () => {
    fake.fallback = { json: { products: [{ name: 'Red apple', url: 'https://made-up.example/apple' }] } };
    const result = await mcp.call('extract', { sessionId, instruction: 'List the products', schema: productsSchema });
    expect(errorCode(result)).toBe('extraction_invalid');
    expect(fake.requests).toHaveLength(3);
    expect(sentText(2)).toContain('/products/0/url');
    expect(sentText(2)).toContain('is not the ref of a link');
    const details = (result._meta?.error as { details?: { errors?: string[] } }).details;
    expect(details?.errors?.[0]).toContain('/products/0/url');
  });

  it('uses Anthropic when modelName says so, with a forced tool', async () => {
    fake.enqueue({ json: { headline: 'Fruit shop' } });
    const result = await mcp.call('extract', {
      sessionId,
      instruction: 'The main heading',
      schema: { type: 'object', properties: { headline: { type: 'string' } }, required: ['headline'] },
      modelName: 'anthropic/claude-sonnet-4-6',
      modelClientOptions: { apiKey: 'sk-ant-from-caller' },
    });
    expect(result.structuredContent).toEqual({ headline: 'Fruit shop' });
    const request = fake.requests[0]!;
    expect(request.path).toBe('/v1/messages');
    expect(request.body).toMatchObject({ model: 'claude-sonnet-4-6', tool_choice: { type: 'tool', name: 'extraction' } });
    expect(JSON.stringify(request.headers)).toContain('sk-ant-from-caller');
  });

  it('limits the page to the selector', async () => {
    fake.enqueue({ text: 'Cherries are on offer.' });
    await mcp.call('extract', { sessionId, instruction: 'What is on offer?', selector: 'xpath=//section[@id="specials"]' });
    expect(sentText()).toContain('Cherries at half price');
    expect(sentText()).not.toContain('Red apple');
  });

  it('turns a model HTTP 500, a timeout and a refusal into clear model_error results', async () => {
    fake.enqueue(
      { error: { status: 500, message: 'model backend exploded' } },
      { delayMs: 5_000, then: { text: 'late' } },
      { refusal: 'I cannot do that.' },
    );
    const options = { sessionId, instruction: 'x', modelClientOptions: { maxRetries: 0, timeout: 500 } };
    const failed = await mcp.call('extract', options);
    expect(errorCode(failed)).toBe('model_error');
    expect((failed.content[0] as { text: string }).text).toMatch(/HTTP 500: model backend exploded/);
    const slow = await mcp.call('extract', options);
    expect(errorCode(slow)).toBe('model_error');
    expect((slow.content[0] as { text: string }).text).toMatch(/did not answer in time/);
    const refused = await mcp.call('extract', options);
    expect(errorCode(refused)).toBe('model_error');
    expect((refused.content[0] as { text: string }).text).toMatch(/refused.*I cannot do that/);
    for (const result of [failed, slow, refused]) expect(JSON.stringify(result)).not.toContain(OPENAI_KEY);
  });

  it('says which variable to set when the provider has no key', async () => {
    const result = await mcp.call('extract', { sessionId, instruction: 'x', modelName: 'anthropic/claude-sonnet-4-6' });
    expect(errorCode(result)).toBe('model_not_configured');
    expect((result.content[0] as { text: string }).text).toContain('ANTHROPIC_API_KEY');
    expect(fake.requests).toHaveLength(0);
  });

  it('rejects bad input before calling a model', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ instruction: 'x', schema: { foo: 'bar' } }, 'invalid_argument'],
      [{ instruction: 'x', schema: { type: 'object', properties: { a: { type: 'strin' } } } }, 'invalid_argument'],
      [{ selector: '//*[' }, 'invalid_argument'],
      [{ instruction: 'x', selector: '//*[' }, 'invalid_argument'],
      [{ selector: '//article[@id="nope"]' }, 'selector_not_found'],
      [{ instruction: 'x', modelName: 'mystery-model' }, 'invalid_argument'],
      [{ instruction: 'x', modelClientOptions: { fetch: 'x' } }, 'invalid_argument'],
      [{ instructions: 'typo' }, 'invalid_argument'],
    ];
    for (const [args, code] of cases) expect(errorCode(await mcp.call('extract', { sessionId, ...args })), JSON.stringify(args)).toBe(code);
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a schema nested thousands of levels deep with invalid_argument naming the depth limit', async () => {
    // 1,500 objects are 3,000 levels of JSON, about what the client's own JSON.stringify still writes.
    const result = await mcp.call('extract', { sessionId, instruction: 'x', schema: deepSchema(1_500) });
    expect(errorCode(result)).toBe('invalid_argument');
    expect(JSON.stringify(result.content)).toMatch(/nested more than 100 levels/);
    expect(fake.requests).toHaveLength(0);
  });

  it('sends a fresh actionId in _meta of every call, and a non-object schema comes back as {value}', async () => {
    fake.enqueue({ json: { value: ['Red apple'] } });
    const first = await mcp.call('extract', { sessionId, instruction: 'names', schema: { type: 'array', items: { type: 'string' } } });
    expect(first.structuredContent).toEqual({ value: ['Red apple'] });
    const second = await mcp.call('extract', { sessionId });
    expect(first._meta?.actionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second._meta?.actionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second._meta?.actionId).not.toBe(first._meta?.actionId);
  });
});

describe('page.extract in the library', () => {
  it('has the three forms', async () => {
    const { pageText } = await session.page.extract();
    expect(pageText).toContain('Green pear');
    fake.enqueue({ text: 'Fruit.' });
    expect(await session.page.extract('What is sold?')).toEqual({ extraction: 'Fruit.' });
    fake.enqueue({ json: { products: [{ name: 'Red apple', url: refsIn(pageText, 'Red apple')[0] }] } });
    expect(await session.page.extract({ instruction: 'products', schema: productsSchema })).toEqual({
      products: [{ name: 'Red apple', url: site.url('/extract/apple.html') }],
    });
  });

  it('takes a zod schema, types the result and reports usage', async () => {
    const Products = z.object({
      products: z.array(z.object({ name: z.string(), link: z.string().url(), onSale: z.boolean().optional() })),
    });
    fake.fallback = (request) => ({
      json: { products: [{ name: 'Green pear', link: refsIn(JSON.stringify(request.body.messages), 'Green pear')[0], onSale: null }] },
      usage: { input: 50, output: 5 },
    });
    let usage: unknown;
    const result = await session.page.extract({ instruction: 'products', schema: Products }, { onUsage: (u) => (usage = u) });
    const name: string = result.products[0]!.name;
    expect(name).toBe('Green pear');
    expect(result).toEqual({ products: [{ name: 'Green pear', link: site.url('/extract/pear.html?ref=list') }] });
    expect(usage).toMatchObject({ input_tokens: 50, output_tokens: 5 });
    // zod's optional field went to the model as a required nullable one (strict mode).
    expect(fake.requests[0]!.body.response_format.json_schema.schema.properties.products.items.required).toContain('onSale');
  });

  it('unwraps a non-object schema', async () => {
    fake.enqueue({ json: { value: ['Red apple', 'Green pear', 'Blue plum'] } });
    const names = await session.page.extract({ instruction: 'product names', schema: z.array(z.string()) });
    expect(names).toEqual(['Red apple', 'Green pear', 'Blue plum']);
  });

  it('answers the object itself for an object schema marked nullable (OpenAPI style)', async () => {
    fake.enqueue({ json: { value: { name: 'Red apple' } } });
    const schema = { type: 'object', nullable: true, properties: { name: { type: 'string' } }, required: ['name'] };
    expect(await session.page.extract({ instruction: 'first product', schema })).toEqual({ name: 'Red apple' });
  });

  it('refuses a schema nested thousands of levels deep with invalid_argument naming the depth limit', async () => {
    const error = await session.page.extract({ instruction: 'x', schema: deepSchema(3_000) }).then(
      () => undefined,
      (e: unknown) => e as ServiceError,
    );
    expect(error?.code).toBe('invalid_argument');
    expect(error?.message).toMatch(/nested more than 100 levels/);
    expect(fake.requests).toHaveLength(0);
  });

  it('reports the actionId, usage and page events of a call through onOutcome', async () => {
    fake.enqueue({ text: 'Fruit.', usage: { input: 20, output: 2 } });
    const seen: OperationInfo[] = [];
    expect(await session.page.extract('What is sold?', { onOutcome: (info) => seen.push(info) })).toEqual({ extraction: 'Fruit.' });
    const navigated = await session.navigate(site.url('/extract/products.html'), {}, { onOutcome: (info) => seen.push(info) });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ actionId: expect.stringMatching(/^[0-9a-f-]{36}$/), usage: { input_tokens: 20 }, pageEvents: [] });
    expect(seen[1]!.actionId).toBe(navigated.data.actionId);
    expect(seen[1]!.actionId).not.toBe(seen[0]!.actionId);
  });

  it('stops with cancelled when the signal fires while the model is thinking', async () => {
    fake.enqueue({ delayMs: 30_000, then: { text: 'late' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const error = await session.page.extract('slow question', { signal: controller.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as ServiceError).code).toBe('cancelled');
    // Well before the 30 s answer: the call stopped on cancellation.
    expect(Date.now() - started).toBeLessThan(15_000);
    // The session is free again afterwards.
    expect((await session.page.extract()).pageText).toContain('Red apple');
  });

  it('checks the answer with the zod schema too', async () => {
    fake.enqueue({ json: { name: 'Red apple' } });
    const schema = z.object({ name: z.string().refine((value) => value.startsWith('X'), 'must start with X') });
    const error = await session.page.extract({ instruction: 'a name', schema }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('extraction_invalid');
    expect((error as ServiceError).message).toContain('must start with X');
  });
});
