import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { EgressRefusedError, type Egress } from '../egress/index.js';
import { cancelledError, ServiceError } from '../errors.js';
import type { ToolSpec } from '../llm/types.js';
import { nestedTooDeep, tooDeepMessage } from '../validation.js';
import { VERSION } from '../../version.js';
import type { AgentIntegration, IntegrationSpec } from './schema.js';

const CONNECT_TIMEOUT_MS = 15_000;
const CALL_TIMEOUT_MS = 60_000;
/** Providers accept tool names of at most 64 characters from this alphabet. */
const MAX_TOOL_NAME = 64;

interface Connection {
  client: Client;
  /** Clients we connected are closed by us; clients the library caller gave stay open. */
  owned: boolean;
  label: string;
}

interface IntegrationTool {
  spec: ToolSpec;
  connection: Connection;
  toolName: string;
}

/** The MCP servers of one agent run: their tools under prefixed names, and the clients to close when the run ends. */
export class Integrations {
  private closed = false;

  private constructor(
    private readonly connections: Connection[],
    private readonly tools: Map<string, IntegrationTool>,
  ) {}

  static readonly none = new Integrations([], new Map());

  /** Connects every integration (all or none: a failure closes the others and throws `integration_error`). */
  static async connect(
    list: AgentIntegration[] | undefined,
    reserved: Set<string>,
    { signal, egress }: { signal?: AbortSignal; egress?: Egress } = {},
  ): Promise<Integrations> {
    if (!list?.length) return Integrations.none;
    const fetch = transportFetch(egress);
    const settled = await Promise.allSettled(list.map((item, index) => openConnection(item, index, { signal, fetch })));
    const connections = settled.flatMap((entry) => (entry.status === 'fulfilled' ? [entry.value] : []));
    const integrations = new Integrations(connections, new Map());
    const failure = settled.find((entry): entry is PromiseRejectedResult => entry.status === 'rejected');
    if (failure) {
      await integrations.close();
      throw failure.reason instanceof ServiceError ? failure.reason : new ServiceError('integration_error', String(failure.reason));
    }
    try {
      await integrations.listAll(reserved, signal);
    } catch (err) {
      await integrations.close();
      throw err;
    }
    return integrations;
  }

  get specs(): ToolSpec[] {
    return [...this.tools.values()].map((tool) => tool.spec);
  }

  get labels(): string[] {
    return this.connections.map((connection) => connection.label);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Calls a tool; a result with isError throws so the model sees it as a failed action. */
  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const tool = this.tools.get(name);
    if (!tool) throw new ServiceError('invalid_argument', `Unknown tool "${name}".`);
    const result = (await tool.connection.client.callTool({ name: tool.toolName, arguments: args }, undefined, {
      signal,
      timeout: CALL_TIMEOUT_MS,
    })) as CallToolResult;
    const text = resultText(result);
    if (result.isError) throw new Error(text || `${tool.toolName} failed without a message.`);
    return text;
  }

  /** Closes the clients this run opened, ending their server sessions; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      this.connections
        .filter((connection) => connection.owned)
        .map(async ({ client }) => {
          const transport = client.transport;
          if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
          await client.close().catch(() => undefined);
        }),
    );
  }

  private async listAll(reserved: Set<string>, signal?: AbortSignal): Promise<void> {
    const prefixes = new Set<string>();
    for (const [index, connection] of this.connections.entries()) {
      let prefix = sanitize(connection.client.getServerVersion()?.name ?? '') || `mcp${index + 1}`;
      if (prefixes.has(prefix)) prefix = `${prefix}${index + 1}`;
      prefixes.add(prefix);
      const listed: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await connection.client
          .listTools(cursor ? { cursor } : undefined, { signal, timeout: CONNECT_TIMEOUT_MS })
          .catch((err: unknown) => {
            throw new ServiceError(
              'integration_error',
              `Could not list the tools of MCP integration ${connection.label}: ${message(err)}`,
              { cause: err },
            );
          });
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      for (const tool of listed) {
        const name = `${prefix}__${sanitize(tool.name)}`.slice(0, MAX_TOOL_NAME);
        if (reserved.has(name) || this.tools.has(name)) continue;
        // Adapters walk tool schemas recursively: a server's schema gets the same depth bound as a caller's.
        if (nestedTooDeep(tool.inputSchema))
          throw new ServiceError(
            'integration_error',
            tooDeepMessage(`The input schema of ${tool.name} (MCP integration ${connection.label})`),
          );
        const description = [tool.description ?? tool.title ?? tool.name, `(MCP integration ${connection.label})`].join(' ');
        this.tools.set(name, {
          spec: { name, description, inputSchema: tool.inputSchema as Record<string, unknown> },
          connection,
          toolName: tool.name,
        });
      }
    }
  }
}

function isClient(value: AgentIntegration): value is Client {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Client).callTool === 'function' &&
    typeof (value as Client).listTools === 'function'
  );
}

/**
 * The egress fetch for the MCP transports: policy-checked addresses, connect and headers bounded (a tools/call may
 * take up to the call timeout before its response starts). A cancelled run aborts its requests by closing the
 * clients (their transports abort what is in flight), which still lets them end their server sessions.
 */
function transportFetch(egress: Egress | undefined): typeof fetch | undefined {
  if (!egress) return undefined;
  const setup = egress.fetch();
  const calls = egress.fetch({ headersTimeoutMs: CALL_TIMEOUT_MS });
  return ((input, init) =>
    (typeof init?.body === 'string' && init.body.includes('"tools/call"') ? calls : setup)(input, init)) as typeof fetch;
}

async function openConnection(
  item: AgentIntegration,
  index: number,
  { signal, fetch: egressFetch }: { signal?: AbortSignal; fetch?: typeof fetch },
): Promise<Connection> {
  if (isClient(item)) return { client: item, owned: false, label: item.getServerVersion()?.name ?? `client ${index + 1}` };
  const { url, headers } = typeof item === 'string' ? { url: item, headers: undefined } : (item as Exclude<IntegrationSpec, string>);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ServiceError('integration_error', `Integration ${index + 1} is not a URL: "${url}".`);
  }
  // The label goes into prompts and errors; credentials in a query string must not.
  const label = `${parsed.origin}${parsed.pathname}`;
  const requestInit: RequestInit | undefined = headers ? { headers } : undefined;
  const options = { signal, timeout: CONNECT_TIMEOUT_MS };
  const streamable = new Client({ name: 'browser-session-mcp-agent', version: VERSION });
  try {
    await streamable.connect(new StreamableHTTPClientTransport(parsed, { requestInit, fetch: egressFetch }), options);
    return { client: streamable, owned: true, label };
  } catch (streamableError) {
    await streamable.close().catch(() => undefined);
    if (signal?.aborted) throw cancelledError();
    if (streamableError instanceof EgressRefusedError) {
      throw new ServiceError(
        'integration_error',
        `MCP integration ${label} is refused by the egress policy "public" (${streamableError.reason}). The operator can open it with --egress-allow ${streamableError.host}:${streamableError.port}.`,
        { cause: streamableError },
      );
    }
    const legacy = new Client({ name: 'browser-session-mcp-agent', version: VERSION });
    try {
      await legacy.connect(
        // The SDK sends requestInit's headers on the event stream too: adding them again there sent them twice.
        new SSEClientTransport(parsed, { requestInit, fetch: egressFetch }),
        options,
      );
      return { client: legacy, owned: true, label };
    } catch (sseError) {
      await legacy.close().catch(() => undefined);
      throw new ServiceError(
        'integration_error',
        `Could not connect to MCP integration ${label}: ${message(streamableError)} (streamable HTTP); ${message(sseError)} (SSE). Check the URL, that the server is running, and its auth headers.`,
        { cause: streamableError },
      );
    }
  }
}

function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    if (part.type === 'text') return part.text;
    if (part.type === 'resource' && 'text' in part.resource) return String(part.resource.text);
    if (part.type === 'resource_link') return `${part.name}: ${part.uri}`;
    return `[${part.type} content not shown]`;
  });
  if (!parts.some((part) => part.length) && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

export function sanitize(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
}

function message(err: unknown): string {
  return err instanceof Error ? err.message.split('\n')[0]! : String(err);
}
