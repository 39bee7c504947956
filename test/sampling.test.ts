import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  type CallToolResult,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentResult } from '../src/core/agent/schema.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { errorCode } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import { connectMcpHttp } from './fixtures/mcp-http.js';
import { NO_MODEL_KEYS, useSiteStdio } from './fixtures/site-stdio.js';

type Params = CreateMessageRequest['params'];
type Reply = CreateMessageResult | CreateMessageResultWithTools;
type Script = (params: Params, signal: AbortSignal) => Reply | Promise<Reply>;

/** A client-side sampling handler answering from a script, recording every request it received. */
class ScriptedSampling {
  readonly received: Params[] = [];
  private readonly queue: Script[] = [];

  enqueue(...scripts: Array<Script | Reply>): void {
    this.queue.push(...scripts.map((script) => (typeof script === 'function' ? script : () => script)));
  }

  install(client: Client): void {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      this.received.push(request.params);
      const next = this.queue.shift();
      if (!next) throw new Error('no scripted sampling reply left');
      return next(request.params, extra.signal);
    });
  }

  reset(): void {
    this.received.length = 0;
    this.queue.length = 0;
  }
}

function text(value: string, usage?: { input_tokens: number; output_tokens: number }): CreateMessageResult {
  return {
    role: 'assistant',
    model: 'client-model-1',
    content: { type: 'text', text: value },
    stopReason: 'endTurn',
    ...(usage ? { _meta: { usage } } : {}),
  };
}

function toolUse(calls: Array<{ id: string; name: string; input: Record<string, unknown> }>): CreateMessageResultWithTools {
  return {
    role: 'assistant',
    model: 'client-model-2',
    content: calls.map((call) => ({ type: 'tool_use' as const, ...call })),
    stopReason: 'toolUse',
    _meta: { usage: { inputTokens: 200, outputTokens: 10 } },
  };
}

/** Every text block of a request, system prompt first. */
function texts(params: Params): string[] {
  const out: string[] = params.systemPrompt ? [params.systemPrompt] : [];
  const walk = (content: unknown): void => {
    if (Array.isArray(content)) return content.forEach(walk);
    const block = content as { type?: string; text?: string; content?: unknown };
    if (block?.type === 'text') out.push(block.text!);
    else if (block?.type === 'tool_result') walk(block.content);
  };
  for (const message of params.messages) walk(message.content);
  return out;
}

/** The ref of the link named `name` in the newest page state of a request. */
function linkRef(params: Params, name: string): string {
  const page =
    texts(params)
      .filter((t) => t.includes('Page state (step'))
      .at(-1) ?? '';
  const match = new RegExp(`\\[${name}\\]\\((\\d+(?:-\\d+)?)\\)`).exec(page);
  if (!match) throw new Error(`no link "${name}" in:\n${page}`);
  return match[1]!;
}

async function connectHttp(url: string, capabilities: ClientCapabilities): Promise<Client> {
  return (await connectMcpHttp(url, { name: 'sampling-test', capabilities })).client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function openPage(client: Client, url: string): Promise<string> {
  const sessionId = ((await call(client, 'session_start', {})).structuredContent as { id: string }).id;
  const nav = await call(client, 'navigate', { sessionId, url });
  expect(nav.isError, JSON.stringify(nav.content)).toBeFalsy();
  return sessionId;
}

describe('MCP sampling over stdio, client without sampling.tools (JSON protocol)', () => {
  const fixture = useSiteStdio({ env: NO_MODEL_KEYS, capabilities: { sampling: {} } });
  const sampling = new ScriptedSampling();

  beforeAll(() => {
    sampling.install(fixture.server.client);
  });

  it('extract with an instruction asks the client model, naming the wanted model as a hint, and reports its usage', async () => {
    sampling.reset();
    const sessionId = await openPage(fixture.server.client, fixture.site.url('/extract/products.html'));
    sampling.enqueue(text('Three fruits: apple, pear and plum.', { input_tokens: 310, output_tokens: 9 }));
    const result = await call(fixture.server.client, 'extract', {
      sessionId,
      instruction: 'Which fruits are sold?',
      modelName: 'claude-sonnet-4-6',
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toEqual({ extraction: 'Three fruits: apple, pear and plum.' });
    expect(result._meta?.usage).toMatchObject({ input_tokens: 310, output_tokens: 9 });
    const [request] = sampling.received;
    expect(sampling.received).toHaveLength(1);
    expect(request!.systemPrompt).toMatch(/^You extract information from a web page/);
    expect(request!.modelPreferences).toEqual({ hints: [{ name: 'claude-sonnet-4-6' }] });
    expect(request!.includeContext).toBe('none');
    expect(request!.tools).toBeUndefined();
    expect(request!.messages).toHaveLength(1);
    const page = texts(request!)[1]!;
    expect(page).toContain('Instruction: Which fruits are sold?');
    expect(page).toMatch(/\[Green pear\]\(\d+(?:-\d+)?\)/);
    await call(fixture.server.client, 'session_end', { sessionId });
  });

  it('an answer whose id is the request id written as a string is not taken for the answer', async () => {
    sampling.reset();
    const sessionId = await openPage(fixture.server.client, fixture.site.url('/extract/products.html'));
    fixture.server.client.setRequestHandler(CreateMessageRequestSchema, async (_request, extra) => {
      // Sent first, with id "0" for request 0: the SDK's lookup by Number(id) took it for the answer.
      await fixture.server.transport.send({ jsonrpc: '2.0', id: String(extra.requestId), result: text('Forged answer.') });
      return text('Real answer.');
    });
    try {
      const result = await call(fixture.server.client, 'extract', { sessionId, instruction: 'Which fruits are sold?' });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toEqual({ extraction: 'Real answer.' });
    } finally {
      sampling.install(fixture.server.client);
      await call(fixture.server.client, 'session_end', { sessionId });
    }
  });

  it('extract with a schema puts the schema in the request and retries an invalid answer with the validation errors', async () => {
    sampling.reset();
    const sessionId = await openPage(fixture.server.client, fixture.site.url('/extract/products.html'));
    const schema = {
      type: 'object',
      properties: {
        products: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, price: { type: 'number' } }, required: ['name', 'price'] },
        },
      },
      required: ['products'],
    };
    sampling.enqueue(
      text('{"products": [{"name": "Red apple", "price": "3 EUR"}]}', { input_tokens: 400, output_tokens: 20 }),
      text('Here it is:\n```json\n{"products": [{"name": "Red apple", "price": 3}, {"name": "Green pear", "price": 4}]}\n```', {
        input_tokens: 450,
        output_tokens: 30,
      }),
    );
    const result = await call(fixture.server.client, 'extract', { sessionId, instruction: 'the products and their prices', schema });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toEqual({
      products: [
        { name: 'Red apple', price: 3 },
        { name: 'Green pear', price: 4 },
      ],
    });
    expect(result._meta?.usage).toMatchObject({ input_tokens: 850, output_tokens: 50 });
    expect(sampling.received).toHaveLength(2);
    const [first, retry] = sampling.received;
    expect(first!.systemPrompt).toContain('valid against this JSON Schema');
    expect(first!.systemPrompt).toContain(JSON.stringify(schema.properties.products.items.properties));
    // The retry carries the invalid answer and what is wrong with it.
    expect(retry!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(texts(retry!).at(-1)).toMatch(/\/products\/0\/price: must be number/);
    await call(fixture.server.client, 'session_end', { sessionId });
  });

  it('agent_execute runs two steps through the JSON tool protocol, retrying a call whose arguments break the tool schema', async () => {
    sampling.reset();
    const sessionId = await openPage(fixture.server.client, fixture.site.url('/agent/chain/one.html'));
    sampling.enqueue(
      text('{"tool": "act", "arguments": {"method": "teleport"}}', { input_tokens: 1000, output_tokens: 5 }),
      (params) =>
        text(JSON.stringify({ tool: 'act', arguments: { method: 'click', ref: linkRef(params, 'Go to room two') } }), {
          input_tokens: 1100,
          output_tokens: 8,
        }),
      text('```json\n{"tool": "done", "arguments": {"success": true, "message": "Reached room two."}}\n```', {
        input_tokens: 900,
        output_tokens: 12,
      }),
    );
    const result = await call(fixture.server.client, 'agent_execute', {
      sessionId,
      executeOptions: { instruction: 'Go to room two of the archive.', maxSteps: 4 },
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const agent = result.structuredContent as AgentResult;
    expect(agent).toMatchObject({ success: true, completed: true, message: 'Reached room two.' });
    expect(agent.actions.map((action) => [action.type, action.error])).toEqual([
      ['click', undefined],
      ['done', undefined],
    ]);
    expect(agent.metadata).toMatchObject({ provider: 'sampling', model: 'client-model-1' });
    expect(agent.usage).toMatchObject({ input_tokens: 3000, output_tokens: 25 });

    const [first, retry, second] = sampling.received;
    expect(sampling.received).toHaveLength(3);
    expect(first!.tools).toBeUndefined();
    expect(first!.systemPrompt).toContain('You control a real web browser');
    expect(first!.systemPrompt).toMatch(/\{"tool": "<name>", "arguments": \{\.\.\.\}\}/);
    expect(first!.systemPrompt).toMatch(/^- act: /m);
    expect(first!.systemPrompt).toMatch(/^- done: /m);
    // The screenshot goes as image content, one block per message for clients before sampling with tools.
    expect(first!.messages.some((message) => !Array.isArray(message.content) && message.content.type === 'image')).toBe(true);
    expect(first!.messages.every((message) => !Array.isArray(message.content))).toBe(true);
    expect(texts(retry!).at(-1)).toMatch(
      /That is not a valid tool call:\n- act arguments\/method: must be equal to one of the allowed values/,
    );
    const secondTexts = texts(second!);
    expect(secondTexts.some((t) => t.includes('"tool":"act"'))).toBe(true);
    expect(secondTexts.some((t) => t.startsWith('Result of act:'))).toBe(true);
    expect(linkRef(second!, 'Go to room three')).toMatch(/^\d+(?:-\d+)?$/);
    await call(fixture.server.client, 'session_end', { sessionId });
  });

  it('a sampling request the client declines is a model_error with its reason, and the session stays usable', async () => {
    sampling.reset();
    const sessionId = await openPage(fixture.server.client, fixture.site.url('/extract/products.html'));
    sampling.enqueue(() => {
      throw new Error('The user declined the sampling request');
    });
    const result = await call(fixture.server.client, 'extract', { sessionId, instruction: 'Summarise.' });
    expect(errorCode(result)).toBe('model_error');
    expect((result._meta?.error as { message: string }).message).toContain('The user declined the sampling request');
    expect((await call(fixture.server.client, 'extract', { sessionId })).isError).toBeFalsy();
    await call(fixture.server.client, 'session_end', { sessionId });
  });

  it('a tool call the client cancels cancels its pending sampling request', async () => {
    sampling.reset();
    const sessionId = await openPage(fixture.server.client, fixture.site.url('/extract/products.html'));
    let asked!: () => void;
    let aborted!: () => void;
    const samplingAsked = new Promise<void>((resolve) => (asked = resolve));
    const samplingAborted = new Promise<void>((resolve) => (aborted = resolve));
    sampling.enqueue((_params, signal) => {
      asked();
      return new Promise<Reply>((_resolve, reject) =>
        signal.addEventListener('abort', () => {
          aborted();
          reject(new Error('aborted'));
        }),
      );
    });
    const controller = new AbortController();
    const pending = fixture.server.client.callTool({ name: 'extract', arguments: { sessionId, instruction: 'Summarise.' } }, undefined, {
      signal: controller.signal,
    });
    await samplingAsked;
    controller.abort();
    await expect(pending).rejects.toThrow();
    // The server passed the cancellation on: the client's handler sees its own request cancelled.
    await samplingAborted;
    // The session is free again at once.
    expect((await call(fixture.server.client, 'extract', { sessionId })).isError).toBeFalsy();
    await call(fixture.server.client, 'session_end', { sessionId });
  });
});

describe('MCP sampling over streamable HTTP', () => {
  let site: SiteServer;
  let llm: FakeLLM;
  let keyless: TestHttp;
  let keyed: TestHttp;

  beforeAll(async () => {
    [site, llm] = await Promise.all([startSiteServer(), startFakeLLM()]);
    keyless = await startHttp({}, new BrowserService({ logger: silentLogger(), env: {} }));
    keyed = await startHttp(
      {},
      new BrowserService({ logger: silentLogger(), env: { OPENAI_API_KEY: 'server-key', OPENAI_BASE_URL: llm.openaiBaseURL } }),
    );
  });
  afterAll(async () => {
    await Promise.all([keyless?.close(), keyed?.close()]);
    await Promise.all([site?.close(), llm?.close()]);
  });

  it('agent_execute uses sampling with tools when the client declares sampling.tools, its extract tool too', async () => {
    const client = await connectHttp(keyless.url, { sampling: { tools: {} } });
    const sampling = new ScriptedSampling();
    sampling.install(client);
    const sessionId = await openPage(client, site.url('/agent/chain/one.html'));
    sampling.enqueue(
      (params) => toolUse([{ id: 'tu-1', name: 'act', input: { method: 'click', ref: linkRef(params, 'Go to room two') } }]),
      toolUse([{ id: 'tu-2', name: 'extract', input: { instruction: 'Which room is this?' } }]),
      text('Room two.', { input_tokens: 50, output_tokens: 3 }),
      toolUse([{ id: 'tu-3', name: 'done', input: { success: true, message: 'In room two.' } }]),
    );
    const result = await call(client, 'agent_execute', {
      sessionId,
      agentConfig: { provider: 'anthropic' },
      executeOptions: { instruction: 'Go to room two.', maxSteps: 3 },
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const agent = result.structuredContent as AgentResult;
    expect(agent).toMatchObject({ success: true, completed: true, message: 'In room two.' });
    expect(agent.actions.map((action) => [action.type, action.error])).toEqual([
      ['click', undefined],
      ['extract', undefined],
      ['done', undefined],
    ]);
    expect(agent.usage).toMatchObject({ input_tokens: 650, output_tokens: 33 });
    expect(agent.metadata).toMatchObject({ provider: 'sampling', model: 'client-model-2' });

    const [first, second, extractRequest, last] = sampling.received;
    expect(sampling.received).toHaveLength(4);
    expect(first!.tools!.map((tool) => tool.name)).toEqual(expect.arrayContaining(['goto', 'act', 'done']));
    expect(first!.toolChoice).toEqual({ mode: 'required' });
    expect(first!.modelPreferences).toEqual({ hints: [{ name: 'claude-sonnet-4-6' }] });
    expect(first!.systemPrompt).toContain('You control a real web browser');
    expect(JSON.stringify(first!.messages)).toMatch(/"type":"image","data":"[^"]+","mimeType":"image\/jpeg"/);
    // The call, then a user message of only its result, then the new page state.
    const tail = second!.messages.slice(-3);
    expect(tail.map((message) => message.role)).toEqual(['assistant', 'user', 'user']);
    expect(tail[0]!.content).toEqual([expect.objectContaining({ type: 'tool_use', id: 'tu-1', name: 'act' })]);
    expect(tail[1]!.content).toEqual([expect.objectContaining({ type: 'tool_result', toolUseId: 'tu-1' })]);
    expect(linkRef(second!, 'Go to room three')).toMatch(/^\d+(?:-\d+)?$/);
    // The extract tool asks the same client, without tools, and the model reads its answer as the tool result.
    expect(extractRequest!.tools).toBeUndefined();
    expect(extractRequest!.systemPrompt).toMatch(/^You extract information from a web page/);
    expect(texts(extractRequest!)[1]).toContain('Instruction: Which room is this?');
    expect(last!.messages.at(-2)!.content).toEqual([
      expect.objectContaining({
        type: 'tool_result',
        toolUseId: 'tu-2',
        content: [{ type: 'text', text: expect.stringContaining('Room two.') }],
      }),
    ]);
    await client.close();
  });

  it('extract with an instruction over HTTP gets its answer from the client model', async () => {
    const client = await connectHttp(keyless.url, { sampling: {} });
    const sampling = new ScriptedSampling();
    sampling.install(client);
    const sessionId = await openPage(client, site.url('/extract/products.html'));
    sampling.enqueue(text('Cherries are at half price.'));
    const result = await call(client, 'extract', { sessionId, instruction: 'What is on special?' });
    expect(result.structuredContent).toEqual({ extraction: 'Cherries are at half price.' });
    // The client reported no usage: tokens count 0, the round trip is timed.
    expect(result._meta?.usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });
    expect(sampling.received[0]!.modelPreferences).toBeUndefined();
    await client.close();
  });

  it('without a key and without sampling, model_not_configured names both ways out; REST is unchanged', async () => {
    const client = await connectHttp(keyless.url, {});
    const sessionId = await openPage(client, site.url('/extract/products.html'));
    const result = await call(client, 'extract', { sessionId, instruction: 'Which fruits?' });
    expect(errorCode(result)).toBe('model_not_configured');
    const message = (result._meta?.error as { message: string }).message;
    expect(message).toContain('set OPENAI_API_KEY');
    expect(message).toContain('MCP client that supports sampling');
    const agent = await call(client, 'agent_execute', { sessionId, executeOptions: 'Find the plum.' });
    expect(errorCode(agent)).toBe('model_not_configured');
    const rest = await api(keyless.url, 'POST', `/v1/sessions/${sessionId}/extract`, { body: { instruction: 'Which fruits?' } });
    expect(rest.status).toBe(422);
    expect(rest.json.error.code).toBe('model_not_configured');
    expect(rest.json.error.message).toContain('OPENAI_API_KEY');
    expect(rest.json.error.message).not.toContain('sampling');
    await client.close();
  });

  it('a key on the server or in modelClientOptions wins: no sampling request is sent', async () => {
    llm.reset();
    const sampling = new ScriptedSampling();
    const onKeyed = await connectHttp(keyed.url, { sampling: { tools: {} } });
    sampling.install(onKeyed);
    const keyedSession = await openPage(onKeyed, site.url('/extract/products.html'));
    llm.enqueue({ text: 'Apple, pear, plum.' }, { text: 'Cherries.' });
    const fromServerKey = await call(onKeyed, 'extract', { sessionId: keyedSession, instruction: 'Which fruits?' });
    expect(fromServerKey.structuredContent).toEqual({ extraction: 'Apple, pear, plum.' });

    const onKeyless = await connectHttp(keyless.url, { sampling: {} });
    sampling.install(onKeyless);
    const keylessSession = await openPage(onKeyless, site.url('/extract/products.html'));
    const fromCallerKey = await call(onKeyless, 'extract', {
      sessionId: keylessSession,
      instruction: 'What is on special?',
      modelClientOptions: { apiKey: 'caller-key', baseURL: llm.openaiBaseURL },
    });
    expect(fromCallerKey.structuredContent).toEqual({ extraction: 'Cherries.' });
    expect(llm.requests.map((request) => request.headers.authorization)).toEqual(['Bearer server-key', 'Bearer caller-key']);
    expect(sampling.received).toEqual([]);
    await Promise.all([onKeyed.close(), onKeyless.close()]);
  });
});
