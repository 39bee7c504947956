import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  imageCount,
  lastToolResults,
  latestPage,
  refOf,
  requestTexts,
  startOrdersServer,
  useAgentHarness,
  type OrdersServer,
} from './agent-fixtures.js';
import type { Provider } from './fixtures/fake-llm.js';
import { imageSize } from '../src/core/act/screenshot.js';

/** Scripted multi-step tasks on local pages, through the real SDKs against the fake model server, with both providers. */
describe.each<Provider>(['openai', 'anthropic'])('agent tasks (%s)', (provider) => {
  const h = useAgentHarness(provider);

  it('logs in with a variable and reads a value behind the login, never showing the secret to the model', async () => {
    const secret = 'correct horse battery';
    h.llm.enqueue(
      {
        text: 'Open the login page.',
        toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/agent/login.html') } }],
        usage: { input: 1000, output: 30, reasoning: 4, cached: 200 },
      },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Username/), value: 'alice' } },
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Password/), value: '%password%' } },
          { name: 'act', arguments: { method: 'press', ref: refOf(request, /Password/), key: 'Enter' } },
        ],
        usage: { input: 1500, output: 60, reasoning: 6, cached: 300 },
      }),
      (request) => {
        const balance = /Account balance: (.+)/.exec(latestPage(request))?.[1] ?? 'not found';
        return {
          toolCalls: [{ name: 'done', arguments: { success: true, message: `The balance is ${balance.trim()}` } }],
          usage: { input: 1700, output: 25, reasoning: 0, cached: 0 },
        };
      },
    );
    const result = await h.session.agent(h.config()).execute({
      instruction: 'Sign in as alice with password %password% and tell me the account balance.',
      variables: { password: secret },
    });

    expect(result).toMatchObject({ success: true, completed: true, message: expect.stringContaining('4,217.93 EUR') });
    expect(result.actions.map((action) => action.type)).toEqual(['goto', 'fill', 'fill', 'press', 'done']);
    expect(result.actions[0]).toMatchObject({ reasoning: 'Open the login page.', pageUrl: 'about:blank' });
    expect(result.actions[2]).toMatchObject({
      arguments: { method: 'fill', value: '%password%' },
      pageUrl: h.site.url('/agent/login.html'),
    });
    expect(result.actions[4]!.pageUrl).toBe(h.site.url('/agent/account.html'));
    // Anthropic counts cache reads apart from input_tokens; the adapter reports the total, as OpenAI does.
    expect(result.usage).toEqual({
      input_tokens: provider === 'openai' ? 4200 : 4700,
      output_tokens: 115,
      reasoning_tokens: 10,
      cached_input_tokens: 500,
      inference_time_ms: expect.any(Number),
    });
    expect(result.metadata).toMatchObject({ steps: 3, provider, model: h.config().model, stopReason: 'done' });
    // The secret went to the page only: not to the model, not into the result.
    expect(h.llm.requests).toHaveLength(3);
    for (const request of h.llm.requests) expect(JSON.stringify(request.body)).not.toContain(secret);
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(requestTexts(h.llm.requests[0]!).join('\n')).toContain('%password%');
  });

  it('never shows the model a secret that a GET form put in the URL, encoded as the browser sends it', async () => {
    const secret = 'correct horse battery!';
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/recording/get-login.html') } }] },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Password/), value: '%password%' } },
          { name: 'act', arguments: { method: 'press', ref: refOf(request, /Password/), key: 'Enter' } },
        ],
      }),
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Signed in.' } }] },
    );
    const result = await h.session.agent(h.config()).execute({ instruction: 'Sign in with %password%.', variables: { password: secret } });

    expect(result.actions.map((action) => action.type)).toEqual(['goto', 'fill', 'press', 'done']);
    const sent = new URLSearchParams({ v: secret }).toString().slice('v='.length);
    // The page the form led to has the secret in its URL; the model and the result see the placeholder there.
    expect(result.actions[3]!.pageUrl).toContain('password=%password%');
    for (const request of h.llm.requests) for (const form of [secret, sent]) expect(JSON.stringify(request.body)).not.toContain(form);
    for (const form of [secret, sent]) expect(JSON.stringify(result)).not.toContain(form);
  });

  it('never shows the model a secret the session met before the run (an earlier act filled it), whose page URL holds it', async () => {
    const secret = 'earlier horse battery!';
    await h.session.page.goto(h.site.url('/recording/get-login.html'));
    const { actions } = await h.session.page.observe();
    const password = actions.find((action) => /Password/.test(action.description))!;
    await h.session.page.act({ action: { ...password, arguments: { value: '%pw%' } }, variables: { pw: secret } });
    await h.session.page.act({ ref: password.ref, method: 'press', arguments: { key: 'Enter' } });
    h.llm.enqueue({ toolCalls: [{ name: 'done', arguments: { success: true, message: 'Signed in already.' } }] });
    const result = await h.session.agent(h.config()).execute('Say whether I am signed in.');

    const sent = new URLSearchParams({ v: secret }).toString().slice('v='.length);
    expect(result.actions[0]!.pageUrl).toContain('password=%25pw%25');
    for (const request of h.llm.requests) for (const form of [secret, sent]) expect(JSON.stringify(request.body)).not.toContain(form);
    for (const form of [secret, sent]) expect(JSON.stringify(result)).not.toContain(form);
  });

  it('sends its screenshot at the size the model sees it (Chromium scales it) and says the scale for coordinates', async () => {
    await h.session.page.goto(h.site.url('/agent/login.html'));
    h.llm.enqueue({ toolCalls: [{ name: 'done', arguments: { success: true, message: 'Looked.' } }] });
    await h.session.agent(h.config()).execute('Look at the page.');
    const body = JSON.stringify(h.llm.requests[0]!.body);
    expect(body).toContain('screenshot at 0.4x');
    const jpeg = /(\/9j\/[A-Za-z0-9+/=]+)/.exec(body)![1]!;
    expect(imageSize(Buffer.from(jpeg, 'base64'))).toEqual({ width: 512, height: 320 });
  });

  it('fills and submits a form inside an iframe', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/agent/iframe-form.html') } }] },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Your name/), value: 'Bob' } },
          { name: 'act', arguments: { method: 'selectOption', ref: refOf(request, /combobox: Topic/), values: ['Support'] } },
          { name: 'act', arguments: { method: 'click', ref: refOf(request, /button: Send/) } },
        ],
      }),
      (request) => ({
        toolCalls: [
          { name: 'done', arguments: { success: true, message: /Received message from .*/.exec(latestPage(request))?.[0] ?? 'nothing' } },
        ],
      }),
    );
    const result = await h.session.agent(h.config()).execute('Send the contact form as Bob about support.');
    expect(result.actions.filter((action) => action.error)).toEqual([]);
    // The refs the page shows are of the forms the prompt names: the page's own "0-N", an iframe's "1-N".
    const page = latestPage(h.llm.requests[1]!);
    expect(page).toMatch(/^\[0-\d+\] iframe: Contact form$/m);
    expect(page).toMatch(/^ \[1-\d+\] textbox: Your name$/m);
    expect(requestTexts(h.llm.requests[0]!)[0]).toContain('"[0-12]" for the page itself, "[1-4]" inside the first iframe');
    expect(result.message).toBe('Received message from Bob about support.');
    expect(await h.session.page.extract()).toMatchObject({ pageText: expect.stringContaining('Received message from Bob about support.') });
  });

  it("renames a todo with act's vocabulary (dblclick, fill, press, check, click), each result showing the page change and a new URL", async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/agent/todos.html') } }] },
      // The title has no ref of its own here: act's selector target reaches it.
      { toolCalls: [{ name: 'act', arguments: { method: 'dblclick', selector: 'text=Buy milk' } }] },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /textbox: Edit/), arguments: { value: 'Buy oat milk' } } },
          { name: 'act', arguments: { method: 'press', ref: refOf(request, /textbox: Edit/), key: 'Enter' } },
        ],
      }),
      (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'check', ref: refOf(request, /checkbox: Toggle Buy oat milk/) } }] }),
      (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'click', ref: refOf(request, /Completed/) } }] }),
      (request) => ({
        toolCalls: [{ name: 'done', arguments: { success: true, message: /Buy oat milk/.test(latestPage(request)) ? 'renamed' : 'lost' } }],
      }),
    );
    const result = await h.session
      .agent(h.config())
      .execute({ instruction: 'Rename "Buy milk" to "Buy oat milk" and mark it done.', autoScreenshot: false });

    expect(result).toMatchObject({ success: true, completed: true, message: 'renamed' });
    expect(result.actions.filter((action) => action.error)).toEqual([]);
    expect(result.actions.map((action) => action.type)).toEqual(['goto', 'dblclick', 'fill', 'press', 'check', 'click', 'done']);
    const results = h.llm.requests.slice(2).map((request) => lastToolResults(request));
    // Each result is act's: what was done, then the lines the page gained and lost.
    expect(results[0]!.join('\n')).toMatch(/^Double-clicked selector "text=Buy milk"[\s\S]*^\+ .*textbox: Edit/m);
    expect(results[1]!.join('\n')).toMatch(/^\+ .*Buy oat milk/m);
    expect(results[2]!.join('\n')).toMatch(/^Checked .*\n[\s\S]*^\+ 1 items left/m);
    // A link within the page changes the URL without a new document: the result says where the page is now.
    expect(results[3]!.join('\n')).toContain(`Page: "Todos" ${h.site.url('/agent/todos.html')}#/completed`);
    // The page is shorter than its change: the result leaves it to the next page state, which shows it whole.
    expect(results[3]!.join('\n')).toContain('The page changed throughout: the next page state shows it.');
    expect(results[3]!.join('\n')).not.toContain('Walk the dog');
  });

  it('runs several actions in one act call: each said on a line, one change for all, one step of the budget', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/act/one-call.html') } }] },
      (request) => {
        const plus = { method: 'click', ref: refOf(request, /button: Add one/) };
        return { toolCalls: [{ name: 'act', arguments: { actions: [plus, plus, plus] } }] };
      },
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Counted.' } }] },
    );
    const result = await h.session.agent(h.config()).execute({ instruction: 'Count to three.', maxSteps: 3, autoScreenshot: false });
    expect(result).toMatchObject({ success: true, completed: true });
    expect(result.actions.map((action) => action.type)).toEqual(['goto', 'act', 'done']);
    const said = lastToolResults(h.llm.requests[2]!).join('\n');
    expect(said).toMatch(/^Did 3 actions\.\n1\. Clicked \[\d+\] button "Add one"\.\n2\. .*\n3\. .*\n- Count: 0\n\+ Count: 3$/);
  });

  it('follows links across three pages, showing only the newest page text in full and one screenshot', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/agent/chain/one.html') } }] },
      (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'click', ref: refOf(request, /Go to room two/) } }] }),
      (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'click', ref: refOf(request, /Go to room three/) } }] }),
      (request) => ({
        toolCalls: [{ name: 'done', arguments: { success: true, message: /vault code is (\S+)/.exec(latestPage(request))?.[1] ?? '?' } }],
      }),
    );
    const result = await h.session
      .agent(h.config())
      .execute({ instruction: 'Find the vault code in the archive.', context: 'Start at the archive entrance.' });
    expect(result).toMatchObject({ success: true, completed: true, message: expect.stringContaining('7-ALPHA-42') });
    expect(result.actions.map((action) => [action.type, action.pageUrl])).toEqual([
      ['goto', 'about:blank'],
      ['click', h.site.url('/agent/chain/one.html')],
      ['click', h.site.url('/agent/chain/two.html')],
      ['done', h.site.url('/agent/chain/three.html')],
    ]);
    const last = requestTexts(h.llm.requests[3]!).join('\n');
    expect(last).toContain('Context: Start at the archive entrance.');
    expect(last).toContain('The vault code is');
    // Earlier pages are summarised, not repeated.
    expect(last).not.toContain('Dusty shelves.');
    expect(last).not.toContain('The archive spans several rooms.');
    expect(last).toContain('chain/two.html');
    expect(h.llm.requests.map(imageCount)).toEqual([1, 1, 1, 1]);
  });

  it('reads structured data through the extract tool and counts its model call in usage', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/agent/chain/three.html') } }], usage: { input: 500, output: 10 } },
      {
        toolCalls: [
          {
            name: 'extract',
            arguments: {
              instruction: 'The vault code',
              schema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
            },
          },
        ],
        usage: { input: 600, output: 20 },
      },
      (request) => {
        expect(requestTexts(request).join('\n')).toContain('The vault code is');
        return { json: { code: '7-ALPHA-42' }, usage: { input: 300, output: 5 } };
      },
      (request) => ({
        toolCalls: [
          { name: 'done', arguments: { success: true, message: /"code":"([^"]+)"/.exec(requestTexts(request).join('\n'))?.[1] ?? '?' } },
        ],
        usage: { input: 700, output: 15 },
      }),
    );
    const result = await h.session.agent(h.config()).execute({ instruction: 'Read the vault code.', autoScreenshot: false });
    expect(result.message).toBe('7-ALPHA-42');
    expect(result.actions.map((action) => action.type)).toEqual(['goto', 'extract', 'done']);
    expect(result.usage).toMatchObject({ input_tokens: 2100, output_tokens: 50 });
  });

  it('uses a tool of an MCP integration (with headers) and a custom library tool', async () => {
    const orders: OrdersServer = await startOrdersServer();
    const converted: number[] = [];
    try {
      h.llm.enqueue(
        (request) => {
          const names = (request.body.tools as Array<{ name?: string; function?: { name: string } }>).map(
            (tool) => tool.name ?? tool.function!.name,
          );
          expect(names).toEqual(expect.arrayContaining(['goto', 'act', 'done', 'orders__lookup_order', 'to_dollars']));
          return {
            toolCalls: [
              { name: 'orders__lookup_order', arguments: { orderId: 'A-17' } },
              { name: 'to_dollars', arguments: { euros: 10 } },
            ],
          };
        },
        (request) => {
          const texts = requestTexts(request).join('\n');
          const shipped = /Order A-17 shipped on (\S+)/.exec(texts)?.[1];
          const dollars = /"dollars":(\d+(\.\d+)?)/.exec(texts)?.[1];
          return { toolCalls: [{ name: 'done', arguments: { success: true, message: `shipped ${shipped}, ${dollars} USD` } }] };
        },
      );
      const result = await h.session
        .agent(
          h.config({
            integrations: [{ url: orders.url, headers: { authorization: 'Bearer orders-token' } }],
            tools: {
              to_dollars: {
                description: 'Convert euros to dollars.',
                inputSchema: z.object({ euros: z.number() }),
                execute: async ({ euros }: { euros: number }) => {
                  converted.push(euros);
                  return { dollars: euros * 1.1 };
                },
              },
            },
          }),
        )
        .execute({ instruction: 'When did order A-17 ship, and what is 10 EUR in USD?', autoScreenshot: false });
      expect(result.message).toBe('shipped 2024-03-02, 11 USD');
      expect(converted).toEqual([10]);
      expect(result.actions.map((action) => action.type)).toEqual(['orders__lookup_order', 'to_dollars', 'done']);
      expect(orders.headers.every((headers) => headers.authorization === 'Bearer orders-token')).toBe(true);
      expect(orders.opened).toHaveLength(1);
      expect(orders.closed).toEqual(orders.opened);
      expect(h.llm.requests.map(imageCount)).toEqual([0, 0]);
    } finally {
      await orders.close();
    }
  });

  it('uses a connected MCP Client given by the library and leaves it open', async () => {
    const orders = await startOrdersServer();
    const client = new Client({ name: 'caller', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(orders.url)));
    try {
      h.llm.enqueue({ toolCalls: [{ name: 'orders__lookup_order', arguments: { orderId: 'B-2' } }] }, (request) => ({
        toolCalls: [
          {
            name: 'done',
            arguments: { success: true, message: /Order B-2 shipped[^"\\]*/.exec(requestTexts(request).join('\n'))?.[0] ?? '?' },
          },
        ],
      }));
      const result = await h.session.agent(h.config({ integrations: [client] })).execute('Look up order B-2.');
      expect(result.message).toContain('Order B-2 shipped');
      // The action log names the caller's client instead of walking its object graph.
      const [logged] = h.session.log().entries;
      expect((logged!.arguments.agentConfig as { integrations: unknown[] }).integrations).toEqual(['[Client]']);
      expect(orders.closed).toEqual([]);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['lookup_order']);
    } finally {
      await client.close();
      await orders.close();
    }
  });
});
