import { describe, expect, it } from 'vitest';
import { latestPage, refOf, requestTexts, startOrdersServer, useAgentHarness } from './agent-fixtures.js';
import type { Provider, ReceivedRequest } from './fixtures/fake-llm.js';
import { rejection } from './fixtures/rejection.js';

/** The tool results (and errors) the model was sent in a request, newest last. */
function toolResults(request: ReceivedRequest): string[] {
  return request.body.messages.flatMap((message: { role: string; content: unknown }) => {
    if (message.role === 'tool') return [String(message.content)];
    if (Array.isArray(message.content)) {
      return message.content
        .filter((part: { type: string }) => part.type === 'tool_result')
        .map((part: { content: unknown }) => JSON.stringify(part.content));
    }
    return [];
  });
}

/** How the agent ends when things go wrong: limits, failing tools, bad model output, model failures, cancellation. */
describe.each<Provider>(['openai', 'anthropic'])('agent failure paths (%s)', (provider) => {
  const h = useAgentHarness(provider, ({ session, site }) => session.navigate(site.url('/agent/chain/one.html')));

  it('stops at maxSteps with completed false (snake_case options accepted)', async () => {
    h.llm.fallback = { toolCalls: [{ name: 'act', arguments: { method: 'scroll', direction: 'down' } }] };
    const result = await h.session.agent(h.config()).execute({ instruction: 'Scroll forever.', max_steps: 3, auto_screenshot: false });
    expect(result).toMatchObject({ success: false, completed: false, metadata: { stopReason: 'max_steps', steps: 3, maxSteps: 3 } });
    expect(result.actions.map((action) => action.type)).toEqual(['scroll', 'scroll', 'scroll']);
    expect(h.llm.requests).toHaveLength(3);
  });

  it('counts every call of a turn against maxSteps and answers the calls it skipped', async () => {
    h.llm.enqueue({ toolCalls: [1, 2, 3].map(() => ({ name: 'act', arguments: { method: 'wait', ms: 1 } })) });
    const result = await h.session.agent(h.config()).execute({ instruction: 'Wait.', maxSteps: 2 });
    expect(result.actions).toHaveLength(2);
    expect(result.completed).toBe(false);
  });

  it('runs a done that comes after the call that spent the last action: completed with the answer, the budget shown each step', async () => {
    h.llm.enqueue({ toolCalls: [{ name: 'act', arguments: { method: 'wait', ms: 1 } }] }, (request) => ({
      toolCalls: [
        { name: 'act', arguments: { method: 'wait', ms: 1 } },
        { name: 'done', arguments: { success: true, message: latestPage(request).split('\n')[0]! } },
      ],
    }));
    const result = await h.session.agent(h.config()).execute({ instruction: 'Wait, then answer.', maxSteps: 2, autoScreenshot: false });
    expect(result).toMatchObject({ success: true, completed: true, metadata: { stopReason: 'done' } });
    expect(result.message).toBe('Page state (step 2; actions left: 1 of 2):');
    expect(latestPage(h.llm.requests[0]!)).toMatch(/^Page state \(step 1; actions left: 2 of 2\):/);
    expect(result.actions.map((action) => action.type)).toEqual(['wait', 'wait', 'done']);
    expect(requestTexts(h.llm.requests[0]!)[0]).toContain('Every tool call is one action and counts against your budget');
  });

  it('feeds a failing action back to the model, which recovers', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'act', arguments: { method: 'click', ref: '0-99999' } }] },
      (request) => ({
        text: 'That ref was wrong.',
        toolCalls: [{ name: 'act', arguments: { method: 'click', ref: refOf(request, /Go to room two/) } }],
      }),
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'In room two.' } }] },
    );
    const result = await h.session.agent(h.config()).execute('Go to room two.');
    expect(result).toMatchObject({ success: true, completed: true, message: 'In room two.' });
    expect(result.actions[0]!.error).toMatch(/0-99999/);
    expect(result.actions[1]).toMatchObject({ type: 'click', reasoning: 'That ref was wrong.' });
    expect(result.actions[1]!.error).toBeUndefined();
    const told = toolResults(h.llm.requests[1]!).join('\n');
    expect(told).toContain('0-99999');
    // The agent has no observe and no tool to read the page: it is told what it can do instead.
    expect(told).toContain('the next page state shows the refs that work now; use one of those, or a selector, or x and y.');
    expect(told).not.toMatch(/observe|read the page again/);
    expect(result.actions[2]!.pageUrl).toBe(h.site.url('/agent/chain/two.html'));
  });

  it('records several actions in one call that stopped at a failing one as failed, with what the ones before it did', async () => {
    h.llm.enqueue(
      {
        toolCalls: [
          {
            name: 'act',
            arguments: {
              actions: [
                { method: 'scroll', arguments: { direction: 'down' } },
                { method: 'click', ref: '0-99999' },
              ],
            },
          },
        ],
      },
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Scrolled.' } }] },
    );
    const result = await h.session.agent(h.config()).execute({ instruction: 'Scroll, then click.', autoScreenshot: false });
    expect(result.actions[0]).toMatchObject({
      type: 'act',
      message: expect.stringMatching(/^Scrolled /),
      error: expect.stringMatching(/^action 2 failed: ref_not_found: Unknown element ref "0-99999"/),
    });
    expect(result.actions[0]!.error).toContain('the next page state shows the refs that work now');
  });

  it('answers an unknown tool and bad arguments with errors the model can read', async () => {
    h.llm.enqueue(
      {
        toolCalls: [
          { name: 'fly_to_the_moon', arguments: {} },
          { name: 'act', arguments: { method: 'click', element: 'the link' } },
          { name: 'act', arguments: { method: 'wait', ms: -5 } },
          { name: 'goto', arguments: { url: 'file:///etc/passwd' } },
          { name: 'act', arguments: { method: 'newTab', url: 'file:///etc/passwd' } },
        ],
      },
      { toolCalls: [{ name: 'done', arguments: { success: false, message: 'Could not do it.' } }] },
    );
    const result = await h.session.agent(h.config()).execute('Do something odd.');
    expect(result).toMatchObject({ success: false, completed: true, message: 'Could not do it.' });
    const errors = result.actions.map((action) => action.error);
    expect(errors[0]).toMatch(/Unknown tool "fly_to_the_moon"/);
    expect(errors[1]).toMatch(/act has no field "element" for click; it takes click \{button\?, modifiers\?, delay\?\}/);
    expect(errors[2]).toMatch(/Invalid arguments for wait/);
    expect(errors[3]).toMatch(/url_not_allowed/);
    // act's URL policy holds for the agent's newTab: it runs through act's own pipeline.
    expect(errors[4]).toMatch(/url_not_allowed/);
    expect(toolResults(h.llm.requests[1]!)).toHaveLength(5);
  });

  it('takes a number for a ref and "true" for a boolean, and method arguments given beside method', async () => {
    h.llm.enqueue(
      (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'click', ref: Number(refOf(request, /Go to room two/)) } }] }),
      { toolCalls: [{ name: 'act', arguments: { method: 'scroll', direction: 'down', screens: '1' } }] },
      { toolCalls: [{ name: 'done', arguments: { success: 'true', message: 'In room two.' } }] },
    );
    const result = await h.session.agent(h.config()).execute({ instruction: 'Go to room two.', autoScreenshot: false });
    expect(result.actions.filter((action) => action.error)).toEqual([]);
    expect(result).toMatchObject({ success: true, completed: true, message: 'In room two.' });
    expect(result.actions[1]!.pageUrl).toBe(h.site.url('/agent/chain/two.html'));
  });

  // OpenAI only: Chat Completions carries a tool call's arguments as a JSON string, which can fail to parse; Anthropic's
  // Messages API carries them as a JSON object (`input`), so there is no malformed text to answer.
  it.runIf(provider === 'openai')(
    'answers arguments that are not JSON with an error that shows them, cut to 1,000 characters',
    async () => {
      const long = `{"url": "${'x'.repeat(5_000)}`;
      h.llm.enqueue(
        { toolCalls: [{ name: 'goto', arguments: '{"url": ' }] },
        { toolCalls: [{ name: 'act', arguments: long }] },
        { toolCalls: [{ name: 'done', arguments: { success: false, message: 'gave up' } }] },
      );
      const result = await h.session.agent(h.config()).execute('Go somewhere.');
      expect(result.actions[0]).toMatchObject({
        type: 'goto',
        arguments: { raw: '{"url": ' },
        error: expect.stringMatching(/not valid JSON/),
      });
      // The history the model is sent again holds {} for the broken arguments: strict servers reject invalid JSON there.
      const assistant = h.llm.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'assistant');
      expect(assistant.tool_calls[0].function.arguments).toBe('{}');
      // ... and the result shows the model what it sent, which the history does not.
      expect(toolResults(h.llm.requests[1]!)[0]).toMatch(/the history shows them as \{\}\); send a JSON object\. You sent:\n\{"url": $/);
      const cut = `${long.slice(0, 1_000)}… (${long.length} characters in all)`;
      expect(toolResults(h.llm.requests[2]!)[1]).toMatch(/You sent:\n/);
      expect(toolResults(h.llm.requests[2]!)[1]!.endsWith(cut)).toBe(true);
      expect(result.actions[1]).toMatchObject({ type: 'act', arguments: { raw: cut } });
    },
  );

  // Anthropic only: Chat Completions always reports cached and reasoning tokens (0 when none), while a Messages answer
  // may leave the thinking counter out, which is the case this checks.
  it.runIf(provider === 'anthropic')('leaves out usage counters the provider did not report', async () => {
    h.llm.enqueue({ toolCalls: [{ name: 'done', arguments: { success: true, message: 'ok' } }], usage: { input: 10, output: 5 } });
    const result = await h.session.agent(h.config()).execute({ instruction: 'Say ok.', autoScreenshot: false });
    expect(result.usage).toEqual({ input_tokens: 10, output_tokens: 5, inference_time_ms: expect.any(Number) });
  });

  it('nudges a model that answers without a tool call', async () => {
    h.llm.enqueue({ text: 'I think I am done.' }, { toolCalls: [{ name: 'done', arguments: { success: true, message: 'ok' } }] });
    const result = await h.session.agent(h.config()).execute('Say ok.');
    expect(result).toMatchObject({ success: true, message: 'ok', metadata: { steps: 2 } });
    expect(requestTexts(h.llm.requests[1]!).join('\n')).toContain('Answer with a tool call');
  });

  it('fails with model_error when the model answers 500', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'act', arguments: { method: 'scroll' } }] },
      { error: { status: 500, message: 'upstream exploded' } },
    );
    const error = await rejection(h.session.agent(h.config()).execute('Scroll.'));
    expect(error).toMatchObject({ code: 'model_error', status: 422 });
    expect(error.message).toMatch(/500/);
    // The session's queue is free again.
    expect(await h.session.page.goto(h.site.url('/agent/chain/two.html'))).toMatchObject({ status: 200 });
  });

  it('fails with model_error when the model does not answer in time', async () => {
    h.llm.enqueue({ delayMs: 30_000, then: { toolCalls: [{ name: 'done', arguments: { success: true, message: 'late' } }] } });
    const started = Date.now();
    const error = await rejection(h.session.agent(h.config({}, { timeout: 300 })).execute('Be quick.'));
    expect(error.code).toBe('model_error');
    expect(error.message).toMatch(/in time/);
    // Well before the late answer: the 300 ms timeout was honoured (how soon after it is not this test's business).
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('cancellation mid-run ends the run and closes the integration clients', async () => {
    const orders = await startOrdersServer();
    try {
      h.llm.enqueue({ toolCalls: [{ name: 'act', arguments: { method: 'wait', ms: 30_000 } }] });
      const controller = new AbortController();
      const progress: string[] = [];
      const run = h.session
        .agent(h.config({ integrations: [orders.url] }))
        .execute('Wait a long time.', { signal: controller.signal, onProgress: (event) => progress.push(event.message) });
      await expect.poll(() => h.llm.requests.length, { timeout: 10_000 }).toBe(1);
      const started = Date.now();
      setTimeout(() => controller.abort(), 200);
      const error = await rejection(run);
      expect(error.code).toBe('cancelled');
      // Well before the 30 s wait would have ended: the run stopped on cancellation.
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(orders.opened).toHaveLength(1);
      expect(orders.closed).toEqual(orders.opened);
      expect(await h.session.page.goto(h.site.url('/agent/chain/two.html'))).toMatchObject({ status: 200 });
    } finally {
      await orders.close();
    }
  });

  it('reports an integration that cannot connect before the first step', async () => {
    const error = await rejection(h.session.agent(h.config({ integrations: ['http://127.0.0.1:9/mcp'] })).execute('Use the tools.'));
    expect(error.code).toBe('integration_error');
    expect(error.message).toContain('http://127.0.0.1:9/mcp');
    expect(h.llm.requests).toHaveLength(0);
  });

  it("reports an action's own duration as timeMs: a goto to a page that answers after 300 ms takes at least that", async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/slow?ms=300') } }] },
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'loaded' } }] },
    );
    const result = await h.session.agent(h.config()).execute({ instruction: 'Open the slow page.', autoScreenshot: false });
    expect(result.actions.map((action) => action.type)).toEqual(['goto', 'done']);
    expect(result.actions[0]!.timeMs).toBeGreaterThanOrEqual(300);
  });

  it('waits waitBetweenActions between actions', async () => {
    const turn = { toolCalls: [1, 2, 3].map(() => ({ name: 'act', arguments: { method: 'scroll', direction: 'down' } })) };
    h.llm.enqueue(turn, { toolCalls: [{ name: 'done', arguments: { success: true, message: 'scrolled' } }] });
    const result = await h.session
      .agent(h.config())
      .execute({ instruction: 'Scroll three times.', waitBetweenActions: 250, autoScreenshot: false });
    const timings = result.metadata!.stepTimings as Array<{ actionsMs: number }>;
    // Two pauses inside the first turn, one before done.
    expect(timings[0]!.actionsMs).toBeGreaterThanOrEqual(2 * 250);
    expect(timings[1]!.actionsMs).toBeGreaterThanOrEqual(250);
    expect(result.metadata!.durationMs).toBeGreaterThanOrEqual(3 * 250);

    // Without the option there is no pause at all; how fast the actions then run is the benchmark's business.
    h.llm.enqueue(turn, { toolCalls: [{ name: 'done', arguments: { success: true, message: 'scrolled' } }] });
    const unpaused = await h.session.agent(h.config()).execute({ instruction: 'Scroll three times.', autoScreenshot: false });
    expect(unpaused.metadata!.waitBetweenActions).toBe(0);
    expect(unpaused.actions.map((action) => action.type)).toEqual(['scroll', 'scroll', 'scroll', 'done']);
  });

  it('refuses bad execute options and custom tools that shadow browser tools', async () => {
    expect((await rejection(h.session.agent(h.config()).execute({ instruction: '' }))).code).toBe('invalid_argument');
    expect((await rejection(h.session.agent(h.config()).execute({ instruction: 'x', maxSteps: 0 }))).code).toBe('invalid_argument');
    const shadow = h.config({
      tools: { act: { description: 'mine', inputSchema: (await import('zod')).z.object({}), execute: () => 'x' } },
    });
    expect((await rejection(h.session.agent(shadow).execute('x'))).code).toBe('invalid_argument');
    expect(h.llm.requests).toHaveLength(0);
  });
});
