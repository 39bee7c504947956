import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../src/core/errors.js';
import { createRequire } from 'node:module';
import { imageSize } from '../src/core/act/index.js';
import { LOW_DETAIL_SIDE } from '../src/core/llm/images.js';
import { createLLMClient, MissingKeyError, resolveModel } from '../src/core/llm/index.js';
import { plainMessages, toolMessages } from '../src/mcp/sampling-messages.js';
import { toStrictSchema } from '../src/core/llm/strict-schema.js';
import type { ChatMessage } from '../src/core/llm/types.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { rejection } from './fixtures/rejection.js';

const OPENAI_KEY = 'sk-test-openai-secret-1234';
const ANTHROPIC_KEY = 'sk-ant-test-secret-5678';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let fake: FakeLLM;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeLLM();
  env = {
    OPENAI_API_KEY: OPENAI_KEY,
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    OPENAI_BASE_URL: fake.openaiBaseURL,
    ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
  };
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const conversation: ChatMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Look at this' },
      { type: 'image', mediaType: 'image/png', data: PNG },
    ],
  },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'c1', name: 'click', arguments: { ref: '0-4' } },
      { id: 'c2', name: 'screenshot', arguments: {} },
    ],
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'click', content: 'clicked' },
  {
    role: 'tool',
    toolCallId: 'c2',
    toolName: 'screenshot',
    content: [
      { type: 'text', text: 'here' },
      { type: 'image', mediaType: 'image/png', data: PNG },
    ],
  },
];
const tools = [
  {
    name: 'click',
    description: 'Click an element',
    inputSchema: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] },
  },
];

describe('resolveModel', () => {
  it('reads provider from a prefix or a bare name', () => {
    expect(resolveModel('openai/gpt-4.1-mini', {}, { env })).toMatchObject({
      provider: 'openai',
      model: 'gpt-4.1-mini',
      apiKey: OPENAI_KEY,
      baseURL: fake.openaiBaseURL,
    });
    expect(resolveModel('anthropic/claude-sonnet-4-6', {}, { env })).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
      apiKey: ANTHROPIC_KEY,
    });
    expect(resolveModel('gpt-4o', {}, { env }).provider).toBe('openai');
    expect(resolveModel('o3-mini', {}, { env }).provider).toBe('openai');
    expect(resolveModel('claude-3-5-haiku-latest', {}, { env }).provider).toBe('anthropic');
  });

  it('uses the default model, then the provider whose key is set', () => {
    expect(resolveModel(undefined, {}, { env, model: 'anthropic/claude-x' })).toMatchObject({ provider: 'anthropic', model: 'claude-x' });
    expect(resolveModel(undefined, {}, { env: { ANTHROPIC_API_KEY: 'k' } })).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
    });
    expect(resolveModel(undefined, {}, { env: { OPENAI_API_KEY: 'k' } })).toMatchObject({ provider: 'openai', model: 'gpt-4.1-mini' });
  });

  it('lets options override the environment and passes client options through', () => {
    const spec = resolveModel('gpt-4o', { apiKey: 'sk-mine', organization: 'org-1', timeout: 5000, maxRetries: 0 }, { env });
    expect(spec).toMatchObject({
      apiKey: 'sk-mine',
      organization: 'org-1',
      baseURL: fake.openaiBaseURL,
      clientOptions: { timeout: 5000, maxRetries: 0 },
    });
  });

  it('a placeholder key (an example pasted as is, an unfilled desktop-bundle field) is no key: the client model can be asked', () => {
    for (const key of ['sk-...', 'sk-ant-...', '${user_config.openai_api_key}', '<your key>', 'YOUR_API_KEY', '  ']) {
      expect(() => resolveModel('gpt-4o', undefined, { env: { OPENAI_API_KEY: key } }), key).toThrow(MissingKeyError);
    }
    expect(resolveModel(undefined, undefined, { env: { OPENAI_API_KEY: 'sk-...', ANTHROPIC_API_KEY: 'k' } }).provider).toBe('anthropic');
    expect(resolveModel('gpt-4o', undefined, { env: { OPENAI_API_KEY: 'sk-proj-abc123' } }).apiKey).toBe('sk-proj-abc123');
  });

  it('fails with model_not_configured naming the variable when no key is set', () => {
    for (const [name, variable] of [
      ['gpt-4o', 'OPENAI_API_KEY'],
      ['claude-x', 'ANTHROPIC_API_KEY'],
    ]) {
      let error: unknown;
      try {
        resolveModel(name, undefined, { env: {} });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).code).toBe('model_not_configured');
      expect((error as ServiceError).message).toContain(variable);
    }
  });

  it('never sends the configured key to a base URL chosen by the caller', () => {
    const spec = resolveModel('llama3.1', { baseURL: 'http://127.0.0.1:9/v1' }, { env });
    expect(spec).toMatchObject({ provider: 'openai', model: 'llama3.1', baseURL: 'http://127.0.0.1:9/v1' });
    expect(spec.apiKey).not.toBe(OPENAI_KEY);
    expect(() => resolveModel('claude-x', { baseURL: 'http://127.0.0.1:9' }, { env })).toThrow(/modelClientOptions.apiKey/);
  });

  it('refuses unknown names and unknown client options', () => {
    expect(() => resolveModel('mystery-model', {}, { env })).toThrow(/openai\/<model>/);
    expect(() => resolveModel('gpt-4o', { fetch: 'x' }, { env })).toThrow(/Unknown model client option "fetch"/);
    expect(() => resolveModel('gpt-4o', { timeout: 'soon' }, { env })).toThrow(
      /timeout must be a non-negative number \(milliseconds\), not a string/,
    );
    // A number of the wrong sign is told what is wrong with it, not that it is no number.
    expect(() => resolveModel('gpt-4o', { timeout: -5 }, { env })).toThrow(
      /timeout must be a non-negative number \(milliseconds\), not -5/,
    );
    expect(() => resolveModel('gpt-4o', { maxRetries: Infinity }, { env })).toThrow(
      /maxRetries must be a non-negative number, not Infinity/,
    );
  });
});

describe('OpenAI adapter through the openai SDK', () => {
  const client = () => createLLMClient(resolveModel('openai/gpt-4.1-mini', { maxRetries: 0 }, { env }));

  it('sends tools, tool results and images in Chat Completions form and maps the answer', async () => {
    // The fake answers after 150 ms: the reported inference time must cover that wait.
    fake.enqueue({
      delayMs: 150,
      then: { toolCalls: [{ name: 'click', arguments: { ref: '0-7' } }], usage: { input: 321, output: 12, reasoning: 5, cached: 100 } },
    });
    const response = await client().chat({ system: 'be brief', messages: conversation, tools, toolChoice: 'required' });
    expect(response.stopReason).toBe('tool_calls');
    expect(response.toolCalls).toEqual([{ id: expect.any(String), name: 'click', arguments: { ref: '0-7' } }]);
    expect(response.usage).toMatchObject({ input_tokens: 321, output_tokens: 12, reasoning_tokens: 5, cached_input_tokens: 100 });
    expect(response.usage.inference_time_ms).toBeGreaterThanOrEqual(150);

    const { body, headers } = fake.requests[0]!;
    expect(headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(body.model).toBe('gpt-4.1-mini');
    expect(body.tool_choice).toBe('required');
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'click', description: 'Click an element', parameters: tools[0]!.inputSchema } },
    ]);
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
    expect(body.messages[1].content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } });
    expect(body.messages[2].tool_calls[0]).toEqual({ id: 'c1', type: 'function', function: { name: 'click', arguments: '{"ref":"0-4"}' } });
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'clicked' });
    expect(body.messages[5].content[1].image_url.url).toContain('base64,');
  });

  it('asks for strict json_schema output and drops the nulls it added for optional fields', async () => {
    fake.enqueue({ json: { title: 'Hello', tags: ['a'], note: null } });
    const schema = {
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 }, tags: { type: 'array', items: { type: 'string' } }, note: { type: 'string' } },
      required: ['title', 'tags'],
    };
    const result = await client().generateObject({ messages: [{ role: 'user', content: 'extract' }], schema, schemaName: 'page data' });
    expect(result.value).toEqual({ title: 'Hello', tags: ['a'] });
    const format = fake.requests[0]!.body.response_format;
    expect(format.type).toBe('json_schema');
    expect(format.json_schema).toMatchObject({ name: 'page_data', strict: true });
    expect(format.json_schema.schema).toEqual({
      type: 'object',
      properties: { title: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, note: { type: ['string', 'null'] } },
      required: ['title', 'tags', 'note'],
      additionalProperties: false,
    });
  });

  it('falls back to non-strict output for schemas strict mode cannot express', async () => {
    const schema = {
      type: 'object',
      properties: { prices: { type: 'object', additionalProperties: { type: 'number' } } },
      required: ['prices'],
    };
    expect(toStrictSchema(schema)).toBeUndefined();
    fake.enqueue({ json: { prices: { a: 1 } } });
    const result = await client().generateObject({ messages: [{ role: 'user', content: 'x' }], schema, schemaName: 'r' });
    expect(result.value).toEqual({ prices: { a: 1 } });
    expect(fake.requests[0]!.body.response_format.json_schema).toMatchObject({ strict: false, schema });
  });

  it('rewrites $ref/$defs, enums and anyOf for strict mode', () => {
    const strict = toStrictSchema({
      type: 'object',
      properties: {
        item: { $ref: '#/$defs/item' },
        kind: { type: 'string', enum: ['a', 'b'] },
        id: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      },
      required: ['item'],
      $defs: {
        item: {
          type: 'object',
          properties: { link: { type: 'string', format: 'uri' }, when: { type: 'string', format: 'date-time' } },
          required: ['link'],
        },
      },
    });
    expect(strict).toEqual({
      type: 'object',
      properties: {
        item: { $ref: '#/$defs/item' },
        kind: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] },
        id: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
      },
      required: ['item', 'kind', 'id'],
      additionalProperties: false,
      $defs: {
        item: {
          type: 'object',
          properties: { link: { type: 'string' }, when: { type: ['string', 'null'], format: 'date-time' } },
          required: ['link', 'when'],
          additionalProperties: false,
        },
      },
    });
    expect(toStrictSchema({ type: 'object', properties: { a: { allOf: [{ type: 'string' }] } } })).toBeUndefined();
    expect(toStrictSchema({ type: 'array', items: { type: 'string' } })).toBeUndefined();
  });

  it('reports an unreachable endpoint as model_error', async () => {
    const closed = createLLMClient(resolveModel('gpt-4o', { apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 }, { env }));
    const error = await rejection(closed.chat({ messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.code).toBe('model_error');
    expect(error.message).toMatch(/Could not reach/);
  });

  it('turns HTTP 500 into model_error without leaking the key', async () => {
    fake.enqueue({ error: { status: 500, message: `upstream exploded for ${OPENAI_KEY}` } });
    const error = await rejection(client().chat({ messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.code).toBe('model_error');
    expect(error.message).toContain('HTTP 500');
    expect(error.message).toContain('upstream exploded');
    expect(error.message).not.toContain(OPENAI_KEY);
  });

  it('turns a slow answer into a timeout model_error', async () => {
    fake.enqueue({ delayMs: 5000, then: { text: 'late' } });
    const slow = createLLMClient(resolveModel('gpt-4o', { timeout: 300, maxRetries: 0 }, { env }));
    const error = await rejection(slow.chat({ messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.code).toBe('model_error');
    expect(error.message).toMatch(/did not answer in time/);
  });

  it('turns a refusal or invalid JSON into model_error', async () => {
    fake.enqueue({ refusal: 'I cannot help with that.' }, { raw: 'not json at all' });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    const refused = await rejection(client().generateObject({ messages: [{ role: 'user', content: 'x' }], schema, schemaName: 'r' }));
    expect(refused.code).toBe('model_error');
    expect(refused.message).toMatch(/refused.*I cannot help/);
    const invalid = await rejection(client().generateObject({ messages: [{ role: 'user', content: 'x' }], schema, schemaName: 'r' }));
    expect(invalid.message).toMatch(/valid JSON/);
  });

  it('reports a refusal in chat as stopReason refusal', async () => {
    fake.enqueue({ refusal: 'no' });
    expect((await client().chat({ messages: [{ role: 'user', content: 'x' }] })).stopReason).toBe('refusal');
  });

  it('honours an abort signal', async () => {
    fake.enqueue({ delayMs: 5000, then: { text: 'late' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await rejection(client().chat({ messages: [{ role: 'user', content: 'hi' }], signal: controller.signal }));
    expect(error.code).toBe('cancelled');
  });
});

describe('Anthropic adapter through @anthropic-ai/sdk', () => {
  const client = () => createLLMClient(resolveModel('anthropic/claude-sonnet-4-6', { maxRetries: 0 }, { env }));

  it('sends tools, merged tool results and images in Messages form and maps the answer', async () => {
    fake.enqueue({
      toolCalls: [{ name: 'click', arguments: { ref: '0-9' } }],
      text: 'clicking',
      usage: { input: 50, output: 7, cached: 30, reasoning: 2 },
    });
    const response = await client().chat({
      system: 'be brief',
      messages: conversation,
      tools,
      toolChoice: 'required',
      maxOutputTokens: 1000,
    });
    expect(response).toMatchObject({
      text: 'clicking',
      stopReason: 'tool_calls',
      toolCalls: [{ name: 'click', arguments: { ref: '0-9' } }],
    });
    expect(response.usage).toMatchObject({ input_tokens: 80, output_tokens: 7, cached_input_tokens: 30, reasoning_tokens: 2 });

    const { body, headers } = fake.requests[0]!;
    expect(headers.authorization ?? headers['x-api-key']).toContain(ANTHROPIC_KEY);
    expect(body).toMatchObject({ model: 'claude-sonnet-4-6', system: 'be brief', max_tokens: 1000, tool_choice: { type: 'any' } });
    expect(body.tools).toEqual([{ name: 'click', description: 'Click an element', input_schema: tools[0]!.inputSchema }]);
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[0].content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
    expect(body.messages[1].content).toEqual([
      { type: 'tool_use', id: 'c1', name: 'click', input: { ref: '0-4' } },
      { type: 'tool_use', id: 'c2', name: 'screenshot', input: {} },
    ]);
    expect(body.messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'c1', content: 'clicked' });
    expect(body.messages[2].content[1].content[1].type).toBe('image');
  });

  it('gets structured output through a forced tool', async () => {
    fake.enqueue({ json: { title: 'Hi' } });
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
    const result = await client().generateObject({ messages: [{ role: 'user', content: 'x' }], schema, schemaName: 'extraction' });
    expect(result.value).toEqual({ title: 'Hi' });
    const { body } = fake.requests[0]!;
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'extraction' });
    expect(body.tools[0]).toMatchObject({ name: 'extraction', input_schema: schema });
  });

  it('turns 500, refusal and a missing tool call into model_error', async () => {
    fake.enqueue({ error: { status: 500, message: 'overloaded' } }, { refusal: 'I will not.' }, { text: 'just prose' });
    const schema = { type: 'object', properties: {} };
    const request = () => client().generateObject({ messages: [{ role: 'user', content: 'x' }], schema, schemaName: 'r' });
    const failed = await rejection(request());
    expect(failed.code).toBe('model_error');
    expect(failed.message).toMatch(/HTTP 500: overloaded/);
    expect((await rejection(request())).message).toMatch(/refused.*I will not/);
    expect((await rejection(request())).message).toMatch(/did not return the structured answer/);
  });

  it('explains a rejected key', async () => {
    fake.enqueue({ error: { status: 401, message: 'invalid x-api-key' } });
    const error = await rejection(client().chat({ messages: [{ role: 'user', content: 'x' }] }));
    expect(error.message).toMatch(/ANTHROPIC_API_KEY/);
    expect(error.message).not.toContain(ANTHROPIC_KEY);
  });
});

describe('screenshots at low detail (a page overview beside its text)', () => {
  /** A 1280x800 JPEG of stripes, the size of the agent's viewport screenshot. */
  const screenshot = (() => {
    const { jpegjs } = createRequire(import.meta.url)('playwright-core/lib/utilsBundle') as {
      jpegjs: { encode(image: { width: number; height: number; data: Buffer }, quality: number): { data: Buffer } };
    };
    const [width, height] = [1280, 800];
    const data = Buffer.alloc(width * height * 4, 255);
    for (let i = 0; i < width * height; i++) if (Math.floor(i / 40) % 2) data.fill(20, i * 4, i * 4 + 3);
    return jpegjs.encode({ width, height, data }, 50).data.toString('base64');
  })();
  const page = (detail?: 'low' | 'high'): ChatMessage[] => [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Page state' },
        { type: 'image', mediaType: 'image/jpeg', data: screenshot, ...(detail ? { detail } : {}) },
      ],
    },
  ];
  const sizeOf = (base64: string) => imageSize(Buffer.from(base64, 'base64'));

  it('asks OpenAI for detail "low" (85 tokens instead of 1,105 for 1280x800), "high" only when the part says so', async () => {
    const client = createLLMClient(resolveModel('openai/gpt-4.1-mini', { maxRetries: 0 }, { env }));
    fake.enqueue({ text: 'ok' }, { text: 'ok' });
    await client.chat({ messages: page() });
    await client.chat({ messages: page('high') });
    expect(fake.requests[0]!.body.messages[0].content[1].image_url).toEqual({ url: `data:image/jpeg;base64,${screenshot}`, detail: 'low' });
    expect(fake.requests[1]!.body.messages[0].content[1].image_url.detail).toBe('high');
  });

  it('sends Anthropic a JPEG downscaled to 512 px on its long side (about 219 tokens instead of 1,366)', async () => {
    const client = createLLMClient(resolveModel('anthropic/claude-sonnet-4-6', { maxRetries: 0 }, { env }));
    fake.enqueue({ text: 'ok' }, { text: 'ok' });
    await client.chat({ messages: page() });
    await client.chat({ messages: page('high') });
    const sent = fake.requests[0]!.body.messages[0].content[1].source;
    expect(sent.media_type).toBe('image/jpeg');
    expect(sizeOf(sent.data)).toEqual({ width: LOW_DETAIL_SIDE, height: 320 });
    expect(sizeOf(fake.requests[1]!.body.messages[0].content[1].source.data)).toEqual({ width: 1280, height: 800 });
  });

  it('sends an MCP client the same downscaled image through sampling', () => {
    for (const messages of [toolMessages(page()), plainMessages(page())]) {
      const image = JSON.stringify(messages).match(/"type":"image","data":"([^"]+)"/)![1]!;
      expect(sizeOf(image)).toEqual({ width: LOW_DETAIL_SIDE, height: 320 });
    }
  });
});
