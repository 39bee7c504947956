import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentResult } from '../src/core/agent/schema.js';
import { refOf } from './agent-fixtures.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { errorCode, startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

/** agent_execute through the real stdio server, with the model keys and endpoints taken from its environment. */
describe('agent_execute over MCP stdio', () => {
  let site: SiteServer;
  let llm: FakeLLM;
  let server: StdioServer;
  let sessionId: string;

  beforeAll(async () => {
    [site, llm] = await Promise.all([startSiteServer(), startFakeLLM()]);
    server = await startStdioServer([], {
      OPENAI_API_KEY: 'test-openai-key',
      OPENAI_BASE_URL: llm.openaiBaseURL,
      ANTHROPIC_API_KEY: 'test-anthropic-key',
      ANTHROPIC_BASE_URL: llm.anthropicBaseURL,
    });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all([site?.close(), llm?.close()]);
  });
  beforeEach(async () => {
    llm.reset();
    if (sessionId) await server.call('session_end', { sessionId });
    sessionId = ((await server.call('session_start')).structuredContent as { id: string }).id;
  });

  it('lists agent_execute with a readable input schema and the AgentResult output schema', async () => {
    const { tools } = await server.client.listTools();
    const tool = tools.find((candidate) => candidate.name === 'agent_execute')!;
    expect(tool.inputSchema.required).toEqual(expect.arrayContaining(['sessionId', 'executeOptions']));
    const executeOptions = (
      tool.inputSchema.properties as Record<string, { anyOf?: Array<{ type: string; properties?: Record<string, unknown> }> }>
    ).executeOptions!;
    expect(executeOptions.anyOf?.map((branch) => branch.type)).toEqual(['string', 'object']);
    expect(Object.keys(executeOptions.anyOf![1]!.properties!)).toEqual(expect.arrayContaining(['instruction', 'maxSteps', 'variables']));
    // The Python client's snake_case twins are accepted (the next test sends max_steps) but not listed to the model.
    expect(Object.keys(executeOptions.anyOf![1]!.properties!)).not.toContain('max_steps');
    expect(tool.outputSchema?.required).toEqual(expect.arrayContaining(['success', 'message', 'actions', 'completed']));
  });

  it.each(['openai', 'anthropic'] as const)('runs a task with %s, sending a progress notification per action', async (provider) => {
    llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: site.url('/agent/chain/one.html') } }] },
      (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'click', ref: refOf(request, /Go to room two/) } }] }),
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Reached room two.' } }] },
    );
    const progress: string[] = [];
    const result = (await server.client.callTool(
      {
        name: 'agent_execute',
        arguments: {
          sessionId,
          agentConfig: { provider, model: provider === 'openai' ? 'gpt-test-model' : 'claude-test-model' },
          executeOptions: { instruction: 'Go to room two of the archive.', max_steps: 5 },
        },
      },
      CallToolResultSchema,
      { onprogress: (event) => progress.push(event.message ?? '') },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const agent = result.structuredContent as AgentResult;
    expect(agent).toMatchObject({ success: true, completed: true, message: 'Reached room two.', metadata: { provider, maxSteps: 5 } });
    expect(agent.actions.map((action) => action.type)).toEqual(['goto', 'click', 'done']);
    expect(agent.usage).toMatchObject({ input_tokens: 300, output_tokens: 60 });
    // The SDK client dispatches notifications a microtask late, so one read together with the result may be dropped.
    const seen = progress.filter((message) => message.startsWith('action '));
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual(['action 1: goto', 'action 2: click', 'action 3: done'].slice(0, seen.length));
    // The server's configured key went to its configured endpoint.
    const auth = llm.requests.map((request) => `${request.headers.authorization ?? ''} ${request.headers['x-api-key'] ?? ''}`);
    expect(auth).toEqual(Array(3).fill(expect.stringContaining(`test-${provider}-key`)));
    const info = (await server.call('session_list')).structuredContent as { sessions: Array<{ id: string; url: string }> };
    expect(info.sessions.find((session) => session.id === sessionId)?.url).toBe(site.url('/agent/chain/two.html'));
  });

  it("answers each action with its target and value, secrets as %name%, the page where it ended, and success as the model's claim", async () => {
    const secret = 'correct horse battery';
    llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: site.url('/agent/login.html') } }] },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Username/), value: 'alice' } },
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Password/), value: '%pw%' } },
          { name: 'act', arguments: { method: 'click', ref: refOf(request, /Sign in/) } },
        ],
      }),
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Signed in.' } }] },
    );
    const result = (await server.client.callTool({
      name: 'agent_execute',
      arguments: {
        sessionId,
        agentConfig: { provider: 'openai', model: 'gpt-test-model' },
        executeOptions: { instruction: 'Sign in as alice with password %pw%.', variables: { pw: secret }, autoScreenshot: false },
      },
    })) as CallToolResult;
    const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
    const lines = text.split('\n');
    expect(lines[0]).toBe('The agent says it succeeded (its own claim; check the actions): Signed in.');
    expect(lines[1]).toBe(`Ended on: "Your account" ${site.url('/agent/account.html')}`);
    expect(lines[2]).toBe('5 actions (0 failed):');
    expect(lines[3]).toBe(`1. Opened ${site.url('/agent/login.html')} (HTTP 200).`);
    expect(lines[4]).toMatch(/^2\. Filled \[\d+\] textbox "Username" with "alice"\./);
    expect(lines[5]).toMatch(/^3\. Filled \[\d+\] textbox "Password" with "%pw%"\./);
    expect(lines[6]).toMatch(/^4\. Clicked \[\d+\] button "Sign in"\./);
    expect(lines[7]).toBe('5. Finished, saying it succeeded.');
    expect(text).not.toContain(secret);
    const agent = result.structuredContent as AgentResult;
    expect(agent.metadata).toMatchObject({ url: site.url('/agent/account.html'), title: 'Your account' });
    expect(agent.actions[2]!.message).toMatch(/^Filled \[\d+\] textbox "Password" with "%pw%"\./);
    expect(JSON.stringify(agent)).not.toContain(secret);
  });

  it('answers a model failure as an isError result with model_error, and bad options with invalid_argument', async () => {
    llm.enqueue(
      { error: { status: 500, message: 'boom' } },
      { error: { status: 500, message: 'boom' } },
      { error: { status: 500, message: 'boom' } },
    );
    const failed = await server.call('agent_execute', {
      sessionId,
      agentConfig: { provider: 'openai', model: 'gpt-test-model', options: { maxRetries: 0 } },
      executeOptions: 'Do it.',
    });
    expect(errorCode(failed)).toBe('model_error');
    const bad = await server.call('agent_execute', { sessionId, executeOptions: { instruction: 'x', maxSteps: -1 } });
    expect(errorCode(bad)).toBe('invalid_argument');
    const tools = await server.call('agent_execute', { sessionId, agentConfig: { tools: {} }, executeOptions: 'x' });
    expect(errorCode(tools)).toBe('invalid_argument');
  });
});
