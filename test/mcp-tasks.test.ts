import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { connectMcpHttp } from './fixtures/mcp-http.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { startHttp, type TestHttp } from './http-fixture.js';

// agent_execute as a task: the client gets a handle at once, polls the status, fetches the result from another
// connection, and may cancel it; another key's task does not exist. Under 2025-11-25 the protocol's experimental
// tasks (SDK 1.x client), under 2026-07-28 the Tasks extension (SDK 2.x client), its questions answered by tasks/update.

let site: SiteServer;
let llm: FakeLLM;
let http: TestHttp;
const KEY_A = { 'x-svc-api-key': 'key-a' };
const KEY_B = { 'x-svc-api-key': 'key-b' };

beforeAll(async () => {
  [site, llm, http] = await Promise.all([
    startSiteServer(),
    startFakeLLM(),
    startHttp({ apiKeys: ['key-a', 'key-b'] }, new BrowserService({ logger: silentLogger(), egressPolicy: 'all', env: {} })),
  ]);
});

afterAll(async () => {
  await Promise.all([site?.close(), llm?.close(), http?.close()]);
});

function agentConfig() {
  return { provider: 'openai', model: 'gpt-test-model', options: { apiKey: 'test-key', baseURL: llm.openaiBaseURL, maxRetries: 0 } };
}

const sessionIdOf = (result: CallToolResult) => (result.structuredContent as { id: string }).id;

describe('tasks under MCP 2025-11-25 (SDK 1.x client)', { timeout: 120_000 }, () => {
  it('agent_execute runs as a task: the handle at once, the result from a new connection, unknown to another key', async () => {
    const first = (await connectMcpHttp(http.url, { name: 'tasks-a', headers: KEY_A })).client;
    const listed = (await first.listTools()).tools.find((tool) => tool.name === 'agent_execute');
    expect(listed?.execution).toEqual({ taskSupport: 'optional' });
    const sessionId = sessionIdOf((await first.callTool({ name: 'session_start', arguments: {} })) as CallToolResult);
    await first.callTool({ name: 'navigate', arguments: { sessionId, url: site.url('/agent/chain/one.html') } });
    llm.reset();
    // The model answers after a while, so the task is seen running first.
    llm.enqueue({ delayMs: 500, then: { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Seen room one.' } }] } });
    const created = await first.request(
      {
        method: 'tools/call',
        params: {
          name: 'agent_execute',
          arguments: { sessionId, agentConfig: agentConfig(), executeOptions: { instruction: 'Look around.', autoScreenshot: false } },
          task: { ttl: 60_000 },
        },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect(created.task).toMatchObject({ status: 'working', ttl: 60_000 });
    await first.close();

    // Another connection of the same key finds it; another key does not.
    const again = (await connectMcpHttp(http.url, { name: 'tasks-a2', headers: KEY_A })).client;
    const other = (await connectMcpHttp(http.url, { name: 'tasks-b', headers: KEY_B })).client;
    try {
      await expect(other.experimental.tasks.getTask(taskId)).rejects.toThrow(/Task not found/);
      expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
      const result = await again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ success: true, message: 'Seen room one.' });
      expect((await again.experimental.tasks.getTask(taskId)).status).toBe('completed');
      expect((await again.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(taskId);
      await again.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await Promise.all([again.close(), other.close()]);
    }
  });

  it('on the client model: the sampling request waits in the task and reaches the client on tasks/result', async () => {
    const { client } = await connectMcpHttp(http.url, { name: 'tasks-sampling', headers: KEY_A, capabilities: { sampling: {} } });
    const asked: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(JSON.stringify(request.params.messages).slice(0, 200));
      const reply = JSON.stringify({ tool: 'done', arguments: { success: true, message: 'Answered on tasks/result.' } });
      return { role: 'assistant', model: 'client-model', content: { type: 'text', text: reply }, stopReason: 'endTurn' };
    });
    try {
      const sessionId = sessionIdOf((await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult);
      const created = await client.request(
        {
          method: 'tools/call',
          params: {
            name: 'agent_execute',
            arguments: { sessionId, executeOptions: { instruction: 'Say done.', autoScreenshot: false } },
            task: {},
          },
        },
        CreateTaskResultSchema,
      );
      const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ success: true, message: 'Answered on tasks/result.' });
      expect(asked).toHaveLength(1);
      await client.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await client.close();
    }
  });

  it('tasks/cancel stops the run: the model call in flight is abandoned and the session is free', async () => {
    const { client } = await connectMcpHttp(http.url, { name: 'tasks-cancel', headers: KEY_A });
    try {
      const sessionId = sessionIdOf((await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult);
      llm.reset();
      llm.enqueue({ delayMs: 60_000, then: { toolCalls: [{ name: 'done', arguments: { success: true, message: 'too late' } }] } });
      const created = await client.request(
        {
          method: 'tools/call',
          params: {
            name: 'agent_execute',
            arguments: { sessionId, agentConfig: agentConfig(), executeOptions: { instruction: 'Wait.', autoScreenshot: false } },
            task: {},
          },
        },
        CreateTaskResultSchema,
      );
      await expect.poll(() => llm.requests.length).toBe(1);
      const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
      expect(cancelled.status).toBe('cancelled');
      // The session's queue is free again: a navigate does not wait behind the abandoned run.
      const nav = (await client.callTool({ name: 'navigate', arguments: { sessionId, url: site.url('/index.html') } })) as CallToolResult;
      expect(nav.isError).toBeFalsy();
      expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('cancelled');
      await client.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await client.close();
    }
  });
});

describe('tasks under MCP 2026-07-28: the Tasks extension (SDK 2.x client)', { timeout: 120_000 }, () => {
  const TASKS = 'io.modelcontextprotocol/tasks';
  const TaskHandle = z.looseObject({ resultType: z.literal('task'), taskId: z.string(), status: z.string() });
  const DetailedTask = z.looseObject({
    taskId: z.string(),
    status: z.string(),
    inputRequests: z.record(z.string(), z.looseObject({ method: z.string(), params: z.looseObject({}) })).optional(),
    result: z.looseObject({}).optional(),
  });
  const Empty = z.looseObject({});

  async function connect(headers: Record<string, string>): Promise<ModernClient> {
    const client = new ModernClient(
      { name: 'tasks-2026', version: '1.0.0' },
      { capabilities: { sampling: {}, extensions: { [TASKS]: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new ModernHttpTransport(new URL(`${http.url}/mcp`), { requestInit: { headers } }));
    return client;
  }

  const getTask = (client: ModernClient, taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, DetailedTask);

  /**
   * tools/call for a task handle, as a raw request of the revision: the SDK 2.x client refuses a `task` result of
   * tools/call (the extension's own client library dispatches it raw, too).
   */
  async function callAsTask(headers: Record<string, string>, name: string, args: Record<string, unknown>) {
    const res = await fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name,
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': { sampling: {}, extensions: { [TASKS]: {} } },
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result?: unknown; error?: unknown };
    return TaskHandle.parse(body.result ?? body);
  }

  it('agent_execute on the client model: its question shows as input_required, tasks/update answers it, the result is in the task', async () => {
    const client = await connect(KEY_A);
    const other = await connect(KEY_B);
    try {
      const started = await client.callTool({ name: 'session_start', arguments: {} });
      const sessionId = sessionIdOf(started as CallToolResult);
      await client.callTool({ name: 'navigate', arguments: { sessionId, url: site.url('/agent/chain/one.html') } });
      const handle = await callAsTask(KEY_A, 'agent_execute', {
        sessionId,
        executeOptions: { instruction: 'Say done.', autoScreenshot: false },
      });
      expect(handle.status).toBe('working');
      // The key-less model: the agent's first turn is a sampling request the task carries.
      await expect.poll(async () => (await getTask(client, handle.taskId)).status).toBe('input_required');
      const waiting = await getTask(client, handle.taskId);
      const [key, ask] = Object.entries(waiting.inputRequests!)[0]!;
      expect(ask.method).toBe('sampling/createMessage');
      expect(JSON.stringify(ask.params)).toContain('You control a real web browser');
      await expect(getTask(other, handle.taskId)).rejects.toThrow(/Task not found/);

      const reply = JSON.stringify({ tool: 'done', arguments: { success: true, message: 'Done by the client model.' } });
      await client.request(
        {
          method: 'tasks/update',
          params: {
            taskId: handle.taskId,
            inputResponses: {
              [key]: { role: 'assistant', model: 'client-model', content: { type: 'text', text: reply }, stopReason: 'endTurn' },
            },
          },
        },
        Empty,
      );
      await expect.poll(async () => (await getTask(client, handle.taskId)).status).toBe('completed');
      const done = await getTask(client, handle.taskId);
      expect(done.result).toMatchObject({ structuredContent: { success: true, message: 'Done by the client model.' } });
      await client.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await Promise.all([client.close(), other.close()]);
    }
  });

  it('tasks/cancel ends a task waiting for its question; the status says cancelled', async () => {
    const client = await connect(KEY_A);
    try {
      const sessionId = sessionIdOf((await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult);
      const handle = await callAsTask(KEY_A, 'agent_execute', {
        sessionId,
        executeOptions: { instruction: 'Wait.', autoScreenshot: false },
      });
      await expect.poll(async () => (await getTask(client, handle.taskId)).status).toBe('input_required');
      // The extension's methods are for clients that declare it.
      const undeclared = new ModernClient(
        { name: 'no-tasks', version: '1.0.0' },
        { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await undeclared.connect(new ModernHttpTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: KEY_A } }));
      await expect(getTask(undeclared, handle.taskId)).rejects.toMatchObject({ code: -32021 });
      await undeclared.close();
      await client.request({ method: 'tasks/cancel', params: { taskId: handle.taskId } }, Empty);
      expect((await getTask(client, handle.taskId)).status).toBe('cancelled');
      const nav = await client.callTool({ name: 'navigate', arguments: { sessionId, url: site.url('/index.html') } });
      expect(nav.isError).toBeFalsy();
      await client.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await client.close();
    }
  });
});
