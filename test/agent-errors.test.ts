import { describe, expect, it } from 'vitest';
import { refOf, requestTexts, startOrdersServer, useAgentHarness } from './agent-fixtures.js';
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
    h.llm.fallback = { toolCalls: [{ name: 'scroll', arguments: { direction: 'down' } }] };
    const result = await h.session.agent(h.config()).execute({ instruction: 'Scroll forever.', max_steps: 3, auto_screenshot: false });
    expect(result).toMatchObject({ success: false, completed: false, metadata: { stopReason: 'max_steps', steps: 3, maxSteps: 3 } });
    expect(result.actions.map((action) => action.type)).toEqual(['scroll', 'scroll', 'scroll']);
    expect(h.llm.requests).toHaveLength(3);
  });

  it('counts every call of a turn against maxSteps and answers the calls it skipped', async () => {
    h.llm.enqueue({ toolCalls: [1, 2, 3].map(() => ({ name: 'wait', arguments: { ms: 1 } })) });
    const result = await h.session.agent(h.config()).execute({ instruction: 'Wait.', maxSteps: 2 });
    expect(result.actions).toHaveLength(2);
    expect(result.completed).toBe(false);
  });

  it('feeds a failing action back to the model, which recovers', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'click', arguments: { ref: '0-99999' } }] },
      (request) => ({ text: 'That ref was wrong.', toolCalls: [{ name: 'click', arguments: { ref: refOf(request, /Go to room two/) } }] }),
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'In room two.' } }] },
    );
    const result = await h.session.agent(h.config()).execute('Go to room two.');
    expect(result).toMatchObject({ success: true, completed: true, message: 'In room two.' });
    expect(result.actions[0]!.error).toMatch(/0-99999/);
    expect(result.actions[1]).toMatchObject({ type: 'click', reasoning: 'That ref was wrong.' });
    expect(result.actions[1]!.error).toBeUndefined();
    expect(toolResults(h.llm.requests[1]!).join('\n')).toContain('0-99999');
    expect(result.actions[2]!.pageUrl).toBe(h.site.url('/agent/chain/two.html'));
  });

  it('answers an unknown tool and bad arguments with errors the model can read', async () => {
    h.llm.enqueue(
      {
        toolCalls: [
          { name: 'fly_to_the_moon', arguments: {} },
          { name: 'click', arguments: { element: 'the link' } },
          { name: 'wait', arguments: { ms: -5 } },
          { name: 'goto', arguments: { url: 'file:///etc/passwd' } },
        ],
      },
      { toolCalls: [{ name: 'done', arguments: { success: false, message: 'Could not do it.' } }] },
    );
    const result = await h.session.agent(h.config()).execute('Do something odd.');
    expect(result).toMatchObject({ success: false, completed: true, message: 'Could not do it.' });
    const errors = result.actions.map((action) => action.error);
    expect(errors[0]).toMatch(/Unknown tool "fly_to_the_moon"/);
    expect(errors[1]).toMatch(/Invalid arguments for click/);
    expect(errors[2]).toMatch(/Invalid arguments for wait/);
    expect(errors[3]).toMatch(/url_not_allowed/);
    expect(toolResults(h.llm.requests[1]!)).toHaveLength(4);
  });

  it.runIf(provider === 'openai')('answers arguments that are not JSON with an error', async () => {
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: '{"url": ' }] },
      { toolCalls: [{ name: 'done', arguments: { success: false, message: 'gave up' } }] },
    );
    const result = await h.session.agent(h.config()).execute('Go somewhere.');
    expect(result.actions[0]).toMatchObject({
      type: 'goto',
      arguments: { raw: '{"url": ' },
      error: expect.stringMatching(/not valid JSON/),
    });
  });

  it('nudges a model that answers without a tool call', async () => {
    h.llm.enqueue({ text: 'I think I am done.' }, { toolCalls: [{ name: 'done', arguments: { success: true, message: 'ok' } }] });
    const result = await h.session.agent(h.config()).execute('Say ok.');
    expect(result).toMatchObject({ success: true, message: 'ok', metadata: { steps: 2 } });
    expect(requestTexts(h.llm.requests[1]!).join('\n')).toContain('Answer with a tool call');
  });

  it('fails with model_error when the model answers 500', async () => {
    h.llm.enqueue({ toolCalls: [{ name: 'scroll', arguments: {} }] }, { error: { status: 500, message: 'upstream exploded' } });
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
      h.llm.enqueue({ toolCalls: [{ name: 'wait', arguments: { ms: 30_000 } }] });
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
    const turn = { toolCalls: [1, 2, 3].map(() => ({ name: 'scroll', arguments: { direction: 'down' } })) };
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
      tools: { click: { description: 'mine', inputSchema: (await import('zod')).z.object({}), execute: () => 'x' } },
    });
    expect((await rejection(h.session.agent(shadow).execute('x'))).code).toBe('invalid_argument');
    expect(h.llm.requests).toHaveLength(0);
  });
});
