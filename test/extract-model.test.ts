import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../src/core/errors.js';
import { extractFromSnapshot, splitPage, type ExtractLimits } from '../src/core/extract.js';
import { prepareSchema } from '../src/core/extract-schema.js';
import { createLLMClient, resolveModel } from '../src/core/llm/index.js';
import type { PageSnapshot } from '../src/core/snapshot/index.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { rejection } from './fixtures/rejection.js';

// The model half of extract on page text given by hand; the browser half is covered in extract.test.ts.
let fake: FakeLLM;
let env: Record<string, string>;
const LIMITS: ExtractLimits = { maxPageTokens: 100_000, maxChunks: 8 };

const snapshot: PageSnapshot = {
  url: 'http://127.0.0.1:1/shop.html',
  title: 'Shop',
  text: ['# Shop', '- link "Red apple" [0-5]', '- link "Green pear" [0-6]', 'button "Buy" [0-7]', 'Price: 3 EUR'].join('\n'),
  refs: new Map([
    ['0-5', { ref: '0-5', frameId: '0', role: 'link', name: 'Red apple', href: 'http://127.0.0.1:1/apple.html' }],
    ['0-6', { ref: '0-6', frameId: '0', role: 'link', name: 'Green pear', href: 'http://127.0.0.1:1/pear.html?x=1' }],
    ['0-7', { ref: '0-7', frameId: '0', role: 'button', name: 'Buy' }],
  ]),
};

const productSchema = {
  type: 'object',
  properties: {
    products: {
      type: 'array',
      items: { $ref: '#/$defs/product' },
    },
    currency: { type: 'string', enum: ['EUR', 'USD'] },
    note: { type: 'string', nullable: true },
  },
  required: ['products', 'currency'],
  $defs: {
    product: {
      type: 'object',
      properties: { name: { type: 'string' }, url: { type: 'string', format: 'uri' } },
      required: ['name', 'url'],
    },
  },
};

beforeAll(async () => {
  fake = await startFakeLLM();
  env = {
    OPENAI_API_KEY: 'sk-test',
    ANTHROPIC_API_KEY: 'sk-ant-test',
    OPENAI_BASE_URL: fake.openaiBaseURL,
    ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
  };
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const llm = (model = 'openai/gpt-4.1-mini') => createLLMClient(resolveModel(model, { maxRetries: 0 }, { env }));

/** Text of every message the fake server received in request `i`. */
function sentText(i: number): string {
  return JSON.stringify(fake.requests[i]!.body.messages);
}

describe('extract with a schema', () => {
  it('returns the validated object with link refs mapped to real hrefs', async () => {
    fake.enqueue({
      json: {
        products: [
          { name: 'Red apple', url: '0-5' },
          { name: 'Green pear', url: '[0-6]' },
        ],
        currency: 'EUR',
        note: null,
      },
      usage: { input: 400, output: 30 },
    });
    const outcome = await extractFromSnapshot(
      llm(),
      snapshot,
      { instruction: 'list the products', schema: prepareSchema(productSchema) },
      LIMITS,
    );
    expect(outcome.result).toEqual({
      products: [
        { name: 'Red apple', url: 'http://127.0.0.1:1/apple.html' },
        { name: 'Green pear', url: 'http://127.0.0.1:1/pear.html?x=1' },
      ],
      currency: 'EUR',
      note: null,
    });
    expect(outcome.usage).toMatchObject({ input_tokens: 400, output_tokens: 30 });

    const body = fake.requests[0]!.body;
    expect(body.model).toBe('gpt-4.1-mini');
    expect(sentText(0)).toContain('list the products');
    expect(sentText(0)).toContain('link \\"Red apple\\" [0-5]');
    // The model is asked for refs, not URLs: no uri format, a hint instead.
    const urlField = body.response_format.json_schema.schema.$defs.product.properties.url;
    expect(urlField.format).toBeUndefined();
    expect(urlField.description).toMatch(/element ref/);
  });

  it('retries with the validation errors and returns the corrected answer', async () => {
    fake.enqueue(
      { json: { products: [{ name: 'Red apple', url: '0-5' }], currency: 'GBP' } },
      { json: { products: [{ name: 'Red apple', url: '0-5' }], currency: 'EUR' } },
    );
    const outcome = await extractFromSnapshot(llm(), snapshot, { instruction: 'products', schema: prepareSchema(productSchema) }, LIMITS);
    expect(outcome.result).toMatchObject({ currency: 'EUR' });
    expect(fake.requests).toHaveLength(2);
    expect(sentText(1)).toContain('does not match the schema');
    expect(sentText(1)).toContain('/currency: must be equal to one of the allowed values');
    expect(outcome.usage!.input_tokens).toBe(200);
  });

  it('never returns an invented link: a URL that is not on the page is sent back as an error', async () => {
    fake.enqueue(
      { json: { products: [{ name: 'Red apple', url: 'https://invented.example/apple' }], currency: 'EUR' } },
      { json: { products: [{ name: 'Red apple', url: '0-7' }], currency: 'EUR' } },
      { json: { products: [{ name: 'Red apple', url: '0-99' }], currency: 'EUR' } },
    );
    const error = await rejection(
      extractFromSnapshot(llm(), snapshot, { instruction: 'products', schema: prepareSchema(productSchema) }, LIMITS),
    );
    expect(error.code).toBe('extraction_invalid');
    expect(error.message).toMatch(/not the ref of a link/);
    expect((error.details as { errors: string[] }).errors[0]).toContain('/products/0/url');
    expect(sentText(1)).toContain('https://invented.example/apple');
    expect(sentText(1)).toContain('is not the ref of a link');
    expect(fake.requests).toHaveLength(3);
  });

  it('accepts a URL the page really links to', async () => {
    fake.enqueue({ json: { products: [{ name: 'Red apple', url: 'http://127.0.0.1:1/apple.html' }], currency: 'EUR' } });
    const outcome = await extractFromSnapshot(llm(), snapshot, { instruction: 'products', schema: prepareSchema(productSchema) }, LIMITS);
    expect(outcome.result).toMatchObject({ products: [{ url: 'http://127.0.0.1:1/apple.html' }] });
  });

  it('wraps a non-object schema for the model and unwraps the answer', async () => {
    fake.enqueue({ json: { value: ['Red apple', 'Green pear'] } });
    const prepared = prepareSchema({ type: 'array', items: { type: 'string' } });
    const outcome = await extractFromSnapshot(llm(), snapshot, { instruction: 'names', schema: prepared }, LIMITS);
    expect(outcome).toMatchObject({ result: ['Red apple', 'Green pear'], wrapped: true });
    expect(fake.requests[0]!.body.response_format.json_schema.schema).toMatchObject({
      type: 'object',
      properties: { value: { type: 'array' } },
      required: ['value'],
    });
  });

  it('treats an answer that is not JSON as invalid and retries', async () => {
    fake.enqueue({ raw: 'Sure! Here it is: {' }, { json: { products: [], currency: 'USD' } });
    const outcome = await extractFromSnapshot(llm(), snapshot, { instruction: 'products', schema: prepareSchema(productSchema) }, LIMITS);
    expect(outcome.result).toEqual({ products: [], currency: 'USD' });
    expect(sentText(1)).toContain('not a valid JSON object');
  });

  it('works through Anthropic with a forced tool, retries included', async () => {
    fake.enqueue(
      { json: { products: 'none', currency: 'EUR' } },
      { json: { products: [{ name: 'Green pear', url: '0-6' }], currency: 'EUR' } },
    );
    const outcome = await extractFromSnapshot(
      llm('anthropic/claude-sonnet-4-6'),
      snapshot,
      { instruction: 'products', schema: prepareSchema(productSchema) },
      LIMITS,
    );
    expect(outcome.result).toMatchObject({ products: [{ name: 'Green pear', url: 'http://127.0.0.1:1/pear.html?x=1' }] });
    const first = fake.requests[0]!.body;
    expect(first.model).toBe('claude-sonnet-4-6');
    expect(first.tool_choice).toEqual({ type: 'tool', name: 'extraction' });
    expect(first.tools[0].input_schema.properties.products.type).toBe('array');
    expect(sentText(1)).toContain('/products: must be array');
  });
});

describe('extract with an instruction only', () => {
  it('returns {extraction} from a plain chat call', async () => {
    fake.enqueue({ text: 'The shop sells a red apple and a green pear.' });
    const outcome = await extractFromSnapshot(llm(), snapshot, { instruction: 'What is sold?' }, LIMITS);
    expect(outcome.result).toEqual({ extraction: 'The shop sells a red apple and a green pear.' });
    expect(fake.requests[0]!.body.response_format).toBeUndefined();
    expect(fake.requests[0]!.body.tools).toBeUndefined();
  });

  it('turns a refusal into model_error', async () => {
    fake.enqueue({ refusal: 'Not allowed.' });
    const error = await rejection(extractFromSnapshot(llm('claude-sonnet-4-6'), snapshot, { instruction: 'x' }, LIMITS));
    expect(error.code).toBe('model_error');
    expect(error.message).toMatch(/refused.*Not allowed/);
  });
});

describe('pages larger than the model budget', () => {
  const long: PageSnapshot = { ...snapshot, text: Array.from({ length: 60 }, (_, i) => `- item number ${i}`).join('\n') };

  it('splits at line ends without losing text', () => {
    const chunks = splitPage(long.text, 100);
    expect(chunks.every((chunk) => chunk.length <= 100)).toBe(true);
    expect(chunks.join('\n')).toBe(long.text);
    expect(splitPage('x'.repeat(250), 100)).toEqual(['x'.repeat(100), 'x'.repeat(100), 'x'.repeat(50)]);
  });

  it('extracts in parts and merges the lists', async () => {
    fake.fallback = (request) => {
      const items = [...JSON.stringify(request.body.messages).matchAll(/item number (\d+)/g)].map((m) => Number(m[1]));
      return { json: { items } };
    };
    const schema = prepareSchema({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'integer' } } },
      required: ['items'],
    });
    const outcome = await extractFromSnapshot(
      llm(),
      long,
      { instruction: 'all item numbers', schema },
      { maxPageTokens: 150, maxChunks: 8 },
    );
    expect(fake.requests.length).toBeGreaterThan(1);
    expect(outcome.result).toEqual({ items: Array.from({ length: 60 }, (_, i) => i) });
    expect(outcome.usage!.input_tokens).toBe(100 * fake.requests.length);
    expect(sentText(1)).toMatch(/part 2 of \d/);
  });

  it('combines the parts of a prose answer in one more call', async () => {
    fake.fallback = (request) => ({ text: JSON.stringify(request.body.messages).includes('<part n=') ? 'combined' : 'partial' });
    const outcome = await extractFromSnapshot(llm(), long, { instruction: 'summarise' }, { maxPageTokens: 300, maxChunks: 8 });
    expect(outcome.result).toEqual({ extraction: 'combined' });
    expect(sentText(fake.requests.length - 1)).toContain('<part n=\\"2\\">');
  });

  it('refuses with page_too_large when it would need too many calls', async () => {
    const error = await rejection(extractFromSnapshot(llm(), long, { instruction: 'x' }, { maxPageTokens: 10, maxChunks: 3 }));
    expect(error.code).toBe('page_too_large');
    expect(error.message).toMatch(/selector/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('schema checks', () => {
  it('rejects what is not a JSON Schema', () => {
    for (const bad of [
      { foo: 'bar' },
      { type: 'objekt' },
      { type: 'object', properties: { a: { type: 'string', minLength: 'two' } } },
      {},
    ]) {
      let error: unknown;
      try {
        prepareSchema(bad);
      } catch (err) {
        error = err;
      }
      expect((error as ServiceError).code, JSON.stringify(bad)).toBe('invalid_argument');
    }
  });

  it('accepts zod-style and OpenAPI-style schemas', () => {
    expect(() =>
      prepareSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { a: { type: 'string', example: 'x', 'x-internal': true } },
      }),
    ).not.toThrow();
    const nullable = prepareSchema({ type: 'object', properties: { a: { type: 'string', nullable: true } }, required: ['a'] });
    expect(nullable.validate({ a: null })).toBe(true);
  });
});
