import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { ServiceError } from '../src/core/errors.js';
import { silentLogger } from '../src/core/logger.js';
import { needsSession, operations, type AnyOperation } from '../src/core/operations/index.js';
import { BrowserService } from '../src/core/service.js';
import { Peers } from '../src/http/peers.js';
import { buildTools } from '../src/mcp/tools.js';
import { startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { startHttp, type TestHttp } from './http-fixture.js';
import { bearer, connectMcpHttp } from './fixtures/mcp-http.js';

const KEY = 'operations-test-key';
/** No model is configured: operations that need one answer this code, through every door alike. */
const NO_MODEL = { env: {} };

/** What a door answered: `ok`, or the error code. The same operation must answer the same through every door. */
type Answer = string;

interface Door {
  name: string;
  /** Runs an operation with its example input on the door's session (undefined for operations without one). */
  run(operation: AnyOperation, sessionId: string | undefined): Promise<Answer>;
  start(): Promise<string>;
}

const example = (operation: AnyOperation) => operation.example ?? {};

function mcpAnswer(result: CallToolResult): Answer {
  if (!result.isError) return 'ok';
  return (result._meta?.error as { code?: string } | undefined)?.code ?? 'no code';
}

/** The MCP tool and arguments that run an operation: its own tool, or the tool it is folded into. */
function mcpCall(operation: AnyOperation, sessionId: string | undefined): { name: string; arguments: Record<string, unknown> } {
  const tool = buildTools().find((candidate) => candidate.operations.includes(operation))!;
  const args: Record<string, unknown> = { ...example(operation), ...(sessionId !== undefined ? { sessionId } : {}) };
  if (tool.name !== operation.name) args.operation = operation.name;
  return { name: tool.name, arguments: args };
}

async function restAnswer(base: string, operation: AnyOperation, sessionId: string | undefined): Promise<Answer> {
  const path = operation.rest.path.replace('{id}', encodeURIComponent(sessionId ?? ''));
  const get = operation.rest.method === 'GET';
  const res = await fetch(base + path, {
    method: operation.rest.method,
    headers: { 'x-svc-api-key': KEY, ...(get ? {} : { 'content-type': 'application/json' }) },
    body: get ? undefined : JSON.stringify(example(operation)),
  });
  if (res.status === 200) {
    await res.arrayBuffer();
    return 'ok';
  }
  return ((await res.json()) as { error: { code: string } }).error.code;
}

/** One server pair (a forwards to b), one stdio server, one library: each operation of the table through every door. */
const PROFILE_SECRET = 'operations-test-profile-secret';
const profileDir = mkdtempSync(join(tmpdir(), 'operations-profiles-'));

const CORE_REFUSALS: readonly string[] = ['model_not_configured', 'recording_not_enabled', 'profiles_not_configured', 'profile_not_found'];

describe('every operation of the table answers through every door', () => {
  let a: TestHttp;
  let b: TestHttp;
  let stdio: StdioServer;
  let library: BrowserSessions;
  let mcpA: Client;
  let doors: Door[];

  beforeAll(async () => {
    const peersA = new Peers('a');
    const peersB = new Peers('b');
    // Every door has a profile store (the instances share one directory and secret, the supported set-up), in a temp dir.
    const profiles = { dir: join(profileDir, 'profiles'), secret: PROFILE_SECRET, keyFile: join(profileDir, 'profile.key') };
    const service = (id: string) =>
      new BrowserService({ logger: silentLogger(), egressPolicy: 'all', instanceId: id, profiles, ...NO_MODEL });
    [a, b] = await Promise.all([
      startHttp({ apiKeys: [KEY], peers: peersA }, service('a')),
      startHttp({ apiKeys: [KEY], peers: peersB }, service('b')),
    ]);
    peersA.set({ id: 'b', url: b.url });
    peersB.set({ id: 'a', url: a.url });
    stdio = await startStdioServer(['--profile-dir', join(profileDir, 'stdio'), '--profile-secret', PROFILE_SECRET], {
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
    });
    library = new BrowserSessions({ service: a.service });
    mcpA = (await connectMcpHttp(a.url, { name: 'operations-test', headers: bearer(KEY) })).client;
    const restStart = async (base: string) => {
      const res = await fetch(`${base}/v1/sessions/start`, { method: 'POST', headers: { 'x-svc-api-key': KEY } });
      return ((await res.json()) as { data: { id: string } }).data.id;
    };
    const mcpStart = async (client: { callTool: Client['callTool'] }) =>
      ((await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult).structuredContent!.id as string;
    doors = [
      {
        name: 'MCP stdio',
        start: () => mcpStart(stdio.client),
        run: async (op, id) => mcpAnswer(await stdio.call(mcpCall(op, id).name, mcpCall(op, id).arguments)),
      },
      {
        name: 'MCP HTTP',
        start: () => mcpStart(mcpA),
        run: async (op, id) => mcpAnswer((await mcpA.callTool(mcpCall(op, id))) as CallToolResult),
      },
      { name: 'REST', start: () => restStart(a.url), run: (op, id) => restAnswer(a.url, op, id) },
      {
        name: 'library',
        start: async () => ((await library.call('session_start', {})) as { id: string }).id,
        run: async (op, id) => {
          try {
            await library.call(op.name as 'navigate', { ...example(op), ...(id !== undefined ? { sessionId: id } : {}) } as never);
            return 'ok';
          } catch (err) {
            return err instanceof ServiceError ? err.code : `not a ServiceError: ${String(err)}`;
          }
        },
      },
      { name: 'REST forwarded to a peer', start: () => restStart(b.url), run: (op, id) => restAnswer(a.url, op, id) },
      {
        name: 'MCP forwarded to a peer',
        start: () => restStart(b.url),
        run: async (op, id) => mcpAnswer((await mcpA.callTool(mcpCall(op, id))) as CallToolResult),
      },
    ];
  }, 180_000);

  afterAll(async () => {
    await mcpA?.close();
    await stdio?.close();
    await a?.close();
    await b?.close();
    rmSync(profileDir, { recursive: true, force: true });
  });

  it('lists at least the operations every door had before the table', () => {
    expect(operations.map((operation) => operation.name)).toEqual(
      expect.arrayContaining([
        'session_start',
        'navigate',
        'extract',
        'observe',
        'act',
        'screenshot',
        'session_end',
        'session_list',
        'agent_execute',
      ]),
    );
    for (const operation of operations) expect(operation.example, `${operation.name} declares an example input`).toBeDefined();
  });

  it('runs each operation with its example through MCP stdio, MCP HTTP, REST, the library and forwarding, with the same answer', async () => {
    // session_end last: it ends the session the others use.
    const ordered = [...operations.filter((op) => op.name !== 'session_end'), ...operations.filter((op) => op.name === 'session_end')];
    const answers: Record<string, Record<string, Answer>> = {};
    for (const door of doors) {
      const sessionId = await door.start();
      for (const operation of ordered) {
        (answers[operation.name] ??= {})[door.name] = await door.run(operation, needsSession(operation) ? sessionId : undefined);
      }
    }
    for (const operation of operations) {
      const byDoor = answers[operation.name]!;
      // An answer from the core itself: success, or a typed error no door invented (no model, no recording and no
      // profile store are configured here).
      expect(
        Object.values(byDoor).every((answer) => answer === 'ok' || CORE_REFUSALS.includes(answer)),
        `${operation.name}: ${JSON.stringify(byDoor)}`,
      ).toBe(true);
      expect(new Set(Object.values(byDoor)).size, `${operation.name}: ${JSON.stringify(byDoor)}`).toBe(1);
    }
    // The peer did the forwarded work: its session was ended by the forwarded session_end.
    const onB = await fetch(`${b.url}/v1/sessions?local=true`, { headers: { 'x-svc-api-key': KEY } });
    expect(((await onB.json()) as { data: { sessions: unknown[] } }).data.sessions).toEqual([]);
  }, 300_000);
});
