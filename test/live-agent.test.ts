import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
  type CallToolResult as ModernResult,
} from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { api, readSse, startHttp, type SseEvent, type TestHttp } from './http-fixture.js';
import { startFakeLLM, type FakeLLM, type ReceivedRequest } from './fixtures/fake-llm.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cliProcess } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { clickPagePoint, launchViewerBrowser, openViewer } from './fixtures/live-viewer.js';

// The agent's ask_human: it pauses with the page handed to a person and goes on after they press Done in the live view.
let site: SiteServer;
let llm: FakeLLM;
let viewers: Browser;

beforeAll(async () => {
  [site, llm, viewers] = await Promise.all([startSiteServer(), startFakeLLM(), launchViewerBrowser()]);
});

afterAll(async () => {
  await viewers?.close();
  await Promise.all([site?.close(), llm?.close()]);
});

function agentConfig() {
  return { provider: 'openai', model: 'gpt-test-model', options: { apiKey: 'test-key', baseURL: llm.openaiBaseURL, maxRetries: 0 } };
}

/** The text of the last tool result the model was sent. */
function lastToolResult(request: ReceivedRequest): string {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const tool = messages.filter((message) => message.role === 'tool').at(-1);
  return String(tool?.content ?? '');
}

/** Scripts: ask for a person, then finish with what the model was told and the page text it saw. */
function scriptAskThenDone(reason = 'Press the button on the page.'): void {
  llm.reset();
  llm.enqueue({ toolCalls: [{ name: 'ask_human', arguments: { reason } }] }, (request) => ({
    toolCalls: [
      {
        name: 'done',
        arguments: {
          success: true,
          message: `${lastToolResult(request)} | ${JSON.stringify(request.body.messages).includes('Clicked 1 times')}`,
        },
      },
    ],
  }));
}

/** What a person does in the live view: click the page's button, then Done. */
async function personClicksThenDone(url: string, beforeDone: () => void = () => undefined): Promise<void> {
  const viewer: Page = await openViewer(viewers, url);
  try {
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.control)).toBe('person');
    // The reason is shown as the agent's words, with a warning that the page it read may have steered them.
    const banner = await viewer.locator('#banner').textContent();
    expect(banner).toContain('The agent asks, in its own words: “Press the button on the page.”');
    expect(banner).toContain('a web page it read may have steered them: never type a password, API key or code');
    await clickPagePoint(viewer, 250, 160);
    // The tests read the click's effect from what the agent saw after Done.
    beforeDone();
    await viewer.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.control)).not.toBe('person');
  } finally {
    await viewer.close();
  }
}

describe('ask_human over REST with SSE', { timeout: 180_000 }, () => {
  let http: TestHttp;
  beforeAll(async () => {
    http = await startHttp();
  });
  afterAll(async () => http?.close());

  it('sends an ask_human event with the link, waits for Done without calling the model, and goes on with the page as the person left it', async () => {
    const id = (await api(http.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id;
    await api(http.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: site.url('/live/form.html') } });
    scriptAskThenDone();
    const res = await fetch(`${http.url}/v1/sessions/${id}/agentExecute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-stream-response': 'true' },
      body: JSON.stringify({ agentConfig: agentConfig(), executeOptions: { instruction: 'Press the button', autoScreenshot: false } }),
    });
    let modelCallsAtAsk = -1;
    let person: Promise<void> | undefined;
    const events = await readSse(res, (event: SseEvent) => {
      if (event.event !== 'ask_human') return;
      modelCallsAtAsk = llm.requests.length;
      // No model call while the person has the page.
      person = personClicksThenDone(event.data.url, () => expect(llm.requests.length).toBe(modelCallsAtAsk));
    });
    await person;
    const ask = events.find((event) => event.event === 'ask_human')!;
    expect(ask.data).toMatchObject({ sessionId: id, reason: 'Press the button on the page.' });
    expect(new URL(ask.data.url).pathname).toBe(`/live/${id}`);
    const finished = events.find((event) => event.event === 'finished')!;
    expect(finished.data.data.result.success).toBe(true);
    expect(finished.data.data.result.message).toContain('pressed Done');
    expect(finished.data.data.result.message).toContain('| true');
    expect(llm.requests.length).toBe(2);
  });
});

describe('ask_human with no way to reach a person', { timeout: 180_000 }, () => {
  it('stops the run and returns an interactive link the caller can open', async () => {
    const lib = new BrowserSessions({ logger: silentLogger(), env: {} });
    try {
      const session = await lib.startSession();
      await session.navigate(site.url('/live/form.html'));
      scriptAskThenDone();
      const result = await session.agent(agentConfig() as never).execute({ instruction: 'Press the button', autoScreenshot: false });
      expect(result.completed).toBe(false);
      expect(result.success).toBe(false);
      expect(result.metadata?.stopReason).toBe('ask_human');
      const help = result.metadata?.humanHelp as { url: string; reason: string };
      expect(help.reason).toBe('Press the button on the page.');
      expect(result.message).toContain(help.url);
      const res = await fetch(help.url);
      expect(res.status).toBe(200);
      expect(llm.requests.length).toBe(1);
    } finally {
      await lib.close();
    }
  });

  it('fails the step with a timeout when nobody presses Done, and the agent goes on', async () => {
    const service = new BrowserService({ logger: silentLogger(), egressPolicy: 'all', liveView: { askHumanTimeoutMs: 1_500 } });
    const http = await startHttp({}, service);
    try {
      const id = (await api(http.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id;
      llm.reset();
      llm.enqueue({ toolCalls: [{ name: 'ask_human', arguments: { reason: 'Solve the CAPTCHA.' } }] }, (request) => ({
        toolCalls: [{ name: 'done', arguments: { success: false, message: lastToolResult(request) } }],
      }));
      const res = await fetch(`${http.url}/v1/sessions/${id}/agentExecute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-stream-response': 'true' },
        body: JSON.stringify({ agentConfig: agentConfig(), executeOptions: { instruction: 'Go', autoScreenshot: false } }),
      });
      const events = await readSse(res);
      expect(events.some((event) => event.event === 'ask_human')).toBe(true);
      const result = events.find((event) => event.event === 'finished')!.data.data.result;
      expect(result.actions[0]).toMatchObject({ type: 'ask_human', error: expect.stringContaining('timeout') });
      expect(result.message).toContain('Nobody pressed Done');
    } finally {
      await http.close();
    }
  });
});

/** An MCP client declaring URL-mode elicitation whose person opens the link, clicks and presses Done. */
function elicitingClient(): {
  client: Client;
  completed: string[];
  elicited: Array<{ url: string; elicitationId: string; message: string }>;
  person: () => Promise<void>;
} {
  const client = new Client({ name: 'live-test', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  const completed: string[] = [];
  const elicited: Array<{ url: string; elicitationId: string; message: string }> = [];
  let person: Promise<void> = Promise.resolve();
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as { mode?: string; url?: string; elicitationId?: string; message?: string };
    expect(params.mode).toBe('url');
    elicited.push({ url: params.url!, elicitationId: params.elicitationId!, message: params.message ?? '' });
    person = personClicksThenDone(params.url!);
    return { action: 'accept' };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.push(notification.params.elicitationId);
  });
  return { client, completed, elicited, person: () => person };
}

async function runAgentOverMcp(client: Client): Promise<CallToolResult> {
  const started = (await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult;
  const sessionId = (started.structuredContent as { id: string }).id;
  await client.callTool({ name: 'navigate', arguments: { sessionId, url: site.url('/live/form.html') } });
  scriptAskThenDone();
  return (await client.callTool(
    {
      name: 'agent_execute',
      arguments: { sessionId, agentConfig: agentConfig(), executeOptions: { instruction: 'Press the button', autoScreenshot: false } },
    },
    undefined,
    { timeout: 170_000 },
  )) as CallToolResult;
}

describe('ask_human over MCP with URL elicitation', { timeout: 180_000 }, () => {
  it('sends the link as a URL elicitation over streamable HTTP and the agent goes on after Done', async () => {
    const http = await startHttp();
    const { client, completed, elicited, person } = elicitingClient();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
      const result = await runAgentOverMcp(client);
      await person();
      expect(result.isError).toBeFalsy();
      const agent = result.structuredContent as { success: boolean; message: string };
      expect(agent.success).toBe(true);
      expect(agent.message).toContain('| true');
      expect(elicited).toHaveLength(1);
      expect(new URL(elicited[0]!.url).origin).toBe(http.url);
      expect(elicited[0]!.message).toMatch(/The agent asks, in its own words: “Press the button on the page.” .*may have steered them/);
      await expect.poll(() => completed).toEqual([elicited[0]!.elicitationId]);
    } finally {
      await client.close();
      await http.close();
    }
  });

  it('under MCP 2026-07-28 (SDK 2.x client), asks for the person with an input_required URL elicitation, and the agent goes on after Done', async () => {
    const http = await startHttp();
    const client = new ModernClient(
      { name: 'live-test-2026', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const elicited: Array<{ url: string; message: string }> = [];
    let person: Promise<void> = Promise.resolve();
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { mode?: string; url?: string; message?: string };
      expect(params.mode).toBe('url');
      elicited.push({ url: params.url!, message: params.message ?? '' });
      person = personClicksThenDone(params.url!);
      return { action: 'accept' };
    });
    try {
      await client.connect(new ModernHttpTransport(new URL(`${http.url}/mcp`)));
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const result = await runAgentOverMcp(client as unknown as Client);
      await person;
      expect(result.isError).toBeFalsy();
      expect((result as ModernResult).structuredContent).toMatchObject({ success: true });
      expect((result.structuredContent as { message: string }).message).toContain('| true');
      expect(elicited).toHaveLength(1);
      expect(new URL(elicited[0]!.url).origin).toBe(http.url);
      expect(elicited[0]!.message).toContain('The agent asks, in its own words: “Press the button on the page.”');
    } finally {
      await client.close();
      await http.close();
    }
  });

  it('sends the link of the loopback live-view listener as a URL elicitation over stdio and the agent goes on after Done', async () => {
    const { client, completed, elicited, person } = elicitingClient();
    try {
      await client.connect(new StdioClientTransport(cliProcess()));
      const result = await runAgentOverMcp(client);
      await person();
      expect((result.structuredContent as { success: boolean }).success).toBe(true);
      expect(new URL(elicited[0]!.url).hostname).toBe('127.0.0.1');
      await expect.poll(() => completed).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
