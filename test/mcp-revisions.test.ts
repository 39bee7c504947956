import { Client, StreamableHTTPClientTransport, type CallToolResult, type CreateMessageRequest } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { Round, Rounds } from '../src/mcp/rounds.js';
import { cliProcess } from './fixtures/mcp-stdio.js';
import { NO_MODEL_KEYS } from './fixtures/site-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { startHttp, type TestHttp } from './http-fixture.js';

// MCP 2026-07-28 beside 2025-11-25: a client of the SDK 2.x line pinned to the new revision gets the same tools, and
// what the server needs from it (the client's model) comes as input_required, answered by calling the tool again.
// The 2025-11-25 side (SDK 1.x clients, initialize, sampling pushed on the call's stream) is what the rest of the suite
// drives.

type Params = CreateMessageRequest['params'];

let site: SiteServer;
let keyless: TestHttp;

beforeAll(async () => {
  [site, keyless] = await Promise.all([startSiteServer(), startHttp({}, new BrowserService({ logger: silentLogger(), env: {} }))]);
});

afterAll(async () => {
  await Promise.all([site?.close(), keyless?.close()]);
});

/** A 2.x client pinned to 2026-07-28 whose model answers from a script (the JSON tool protocol: no sampling.tools). */
function modernClient(replies: Array<(params: Params) => string>): { client: Client; received: Params[] } {
  const client = new Client(
    { name: 'revision-test', version: '1.0.0' },
    { capabilities: { sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const received: Params[] = [];
  client.setRequestHandler('sampling/createMessage', async (request) => {
    received.push(request.params);
    const reply = replies.shift();
    if (!reply) throw new Error('no scripted reply left');
    return { role: 'assistant', model: 'client-model-2026', content: { type: 'text', text: reply(request.params) }, stopReason: 'endTurn' };
  });
  return { client, received };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, { timeout: 120_000 })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  return result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

/** The ref of the link named `name` in the newest page state of a sampling request. */
function linkRef(params: Params, name: string): string {
  const page = JSON.stringify(params.messages);
  const matches = [...page.matchAll(new RegExp(`\\[${name}\\]\\((\\d+(?:-\\d+)?)\\)`, 'g'))];
  if (!matches.length) throw new Error(`no link "${name}" in the request`);
  return matches.at(-1)![1]!;
}

async function startSession(client: Client, url: string): Promise<string> {
  const started = await call(client, 'session_start', {});
  const sessionId = /\b(\S{20,})\b/.exec(textOf(started))?.[1] ?? (started.structuredContent as { id: string }).id;
  const nav = await call(client, 'navigate', { sessionId, url });
  expect(nav.isError, textOf(nav)).toBeFalsy();
  return sessionId;
}

describe('MCP 2026-07-28 (SDK 2.x client)', { timeout: 180_000 }, () => {
  it('over streamable HTTP: the same tools, a session, and agent_execute on the client model through input_required', async () => {
    const { client, received } = modernClient([
      (params) => JSON.stringify({ tool: 'act', arguments: { method: 'click', ref: linkRef(params, 'Go to room two') } }),
      () => JSON.stringify({ tool: 'done', arguments: { success: true, message: 'Reached room two.' } }),
    ]);
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${keyless.url}/mcp`)));
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['session_start', 'navigate', 'extract', 'act', 'agent_execute', 'live_view', 'session_end']),
      );
      // The live view as an MCP App, as under 2025-11-25 (test/mcp-app.test.ts).
      const liveView = tools.find((tool) => tool.name === 'live_view')!;
      const uri = (liveView._meta?.ui as { resourceUri: string }).resourceUri;
      expect((await client.listResources()).resources.map((resource) => resource.uri)).toContain(uri);
      expect((await client.readResource({ uri })).contents[0]).toMatchObject({ uri, mimeType: 'text/html;profile=mcp-app' });
      // Stateless: no MCP session was opened on the server.
      expect(keyless.http.mcpSessionCount()).toBe(0);

      const sessionId = await startSession(client, site.url('/agent/chain/one.html'));
      const progress: string[] = [];
      const again = (await client.callTool(
        { name: 'navigate', arguments: { sessionId, url: site.url('/agent/chain/one.html') } },
        { onprogress: (update) => progress.push(update.message ?? '') },
      )) as CallToolResult;
      expect(again.isError, textOf(again)).toBeFalsy();
      // Progress rides the call's own response, upgraded to a stream.
      expect(progress.length).toBeGreaterThan(0);
      expect(textOf(await call(client, 'extract', { sessionId }))).toContain('Go to room two');

      const result = await call(client, 'agent_execute', {
        sessionId,
        executeOptions: { instruction: 'Go to room two of the archive.', maxSteps: 4, autoScreenshot: false },
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ success: true, completed: true, message: 'Reached room two.' });
      // Each model turn was one input_required round: two turns, two sampling requests, then the result.
      expect(received).toHaveLength(2);
      expect(received[0]!.systemPrompt).toContain('You control a real web browser');
      expect(JSON.stringify(received[1]!.messages)).toContain('Result of act:');
      expect(textOf(await call(client, 'extract', { sessionId }))).toContain('Room two');
      expect(textOf(await call(client, 'session_end', { sessionId }))).not.toContain('Error');
      expect(keyless.http.mcpSessionCount()).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('over stdio: the first message picks the revision, and extract with an instruction asks the client model', async () => {
    const { client, received } = modernClient([() => 'Cherries are at half price.']);
    try {
      await client.connect(new StdioClientTransport(cliProcess([], NO_MODEL_KEYS)), { timeout: 170_000 });
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const sessionId = await startSession(client, site.url('/extract/products.html'));
      const answer = await call(client, 'extract', { sessionId, instruction: 'What is on special?' });
      expect(answer.isError, textOf(answer)).toBeFalsy();
      expect(textOf(answer)).toContain('Cherries are at half price.');
      expect(received).toHaveLength(1);
      expect(JSON.stringify(received[0]!.messages)).toContain('What is on special?');
      await call(client, 'session_end', { sessionId });
    } finally {
      await client.close();
    }
  });
});

describe('rounds of a call that waits on its client', () => {
  it('a requestState is the caller’s only: another owner, another tool or an unknown state is refused', async () => {
    const rounds = new Rounds<string>();
    try {
      const round = new Round<string>('key:a', 'extract').start(async (self) => {
        const answer = await self.ask(
          { method: 'sampling/createMessage', params: {} },
          10_000,
          self.controller.signal,
          () => new Error('late'),
        );
        return `answered ${JSON.stringify(answer)}`;
      });
      const step = await round.next(new AbortController().signal);
      expect('asks' in step && Object.keys(step.asks)).toEqual(['sample1']);
      rounds.keep(round);
      expect(() => rounds.take(round.id, 'key:b', 'extract')).toThrow(/unknown or has expired/);
      expect(() => rounds.take(round.id, 'key:a', 'act')).toThrow(/unknown or has expired/);
      expect(() => rounds.take('made-up', 'key:a', 'extract')).toThrow(/unknown or has expired/);
      const same = rounds.take(round.id, 'key:a', 'extract');
      same.answer({ sample1: { text: 'yes' } });
      expect(await same.next(new AbortController().signal)).toEqual({ done: 'answered {"text":"yes"}' });
    } finally {
      rounds.close();
    }
  });

  it('two calls waiting on one round (a client retrying twice) are both answered', async () => {
    let finish!: (value: string) => void;
    const round = new Round<string>('key:a', 'agent_execute').start(() => new Promise((resolve) => (finish = resolve)));
    const both = Promise.all([round.next(new AbortController().signal), round.next(new AbortController().signal)]);
    finish('done');
    expect(await both).toEqual([{ done: 'done' }, { done: 'done' }]);
  });

  it('a client that drops its call while the round waits cancels the work', async () => {
    let seen: AbortSignal | undefined;
    const round = new Round<string>('key:a', 'agent_execute').start(async (self) => {
      seen = self.controller.signal;
      await new Promise((resolve) => self.controller.signal.addEventListener('abort', resolve));
      return 'stopped';
    });
    const dropped = new AbortController();
    const step = round.next(dropped.signal);
    dropped.abort();
    expect(await step).toEqual({ done: 'stopped' });
    expect(seen?.aborted).toBe(true);
  });
});
