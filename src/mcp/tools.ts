import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  annotationsOf,
  callInput,
  listedInput,
  operations as allOperations,
  type AnyOperation,
  type ListingConfig,
} from '../core/operations/index.js';
import { toJsonSchema } from '../core/validation.js';
import { appToolMeta } from './app.js';
import { TASK_TOOLS } from './tasks.js';
import { structuredSchema } from './result.js';

/**
 * The MCP tools, generated from the operation table: one tool per operation, except operations folded into another
 * operation's tool (`mcp.foldInto`), which that tool runs when called with `operation: "<name>"`.
 */
export interface McpTool {
  name: string;
  /** The operation the tool runs without `operation`, then the ones folded into it. */
  operations: AnyOperation[];
  /** What tools/list shows. */
  listing: Tool;
}

/** `config`: the server's, for tools/list (bounds its operator sets); without it, those bounds are left unsaid. */
export function buildTools(operations: readonly AnyOperation[] = allOperations, config?: ListingConfig): McpTool[] {
  const hosts = operations.filter((operation) => !operation.mcp?.foldInto);
  for (const operation of operations) {
    const host = operation.mcp?.foldInto;
    if (host && !hosts.some((candidate) => candidate.name === host))
      throw new Error(`Operation ${operation.name} is folded into "${host}", which is not an MCP tool of its own.`);
  }
  return hosts.map((host) => {
    const members = [host, ...operations.filter((operation) => operation.mcp?.foldInto === host.name)];
    return { name: host.name, operations: members, listing: listing(members, config) };
  });
}

/** Which operation a call runs: the host's, or the folded one named by `operation`. */
export function pickOperation(tool: McpTool, args: Record<string, unknown>): { operation?: AnyOperation; args: Record<string, unknown> } {
  if (tool.operations.length === 1) return { operation: tool.operations[0], args };
  const { operation: name, ...rest } = args;
  if (name === undefined || name === tool.name) return { operation: tool.operations[0], args: rest };
  return { operation: tool.operations.find((operation) => operation.name === name), args: rest };
}

function listing([host, ...folded]: AnyOperation[], config: ListingConfig | undefined): Tool {
  const hostInput = listedInput(host!, config);
  let input: z.ZodObject = hostInput;
  let description = host!.description;
  if (folded.length) {
    const names = folded.map((operation) => operation.name) as [string, ...string[]];
    const extra: Record<string, z.ZodType> = {};
    for (const operation of folded)
      for (const [key, field] of Object.entries(callInput(operation, operation.mcp?.listedInput?.(config)).shape))
        if (!(key in hostInput.shape) && !(key in extra)) extra[key] = (field as z.ZodType).optional();
    input = hostInput.extend({ ...extra, operation: z.enum(names).optional() });
    description += folded.map((operation) => ` operation=${operation.name}: ${operation.description}`).join('');
  }
  // Slimmed as the input is: the full tools/list travels on every session, and the keywords left out bound nothing.
  const outputs = [host!, ...folded].map((operation) => slim(toJsonSchema(structuredSchema(operation), 'output')));
  const annotations = [host!, ...folded].map(annotationsOf);
  const appMeta = appToolMeta(host!.name);
  return {
    name: host!.name,
    title: host!.title,
    description,
    inputSchema: slim(toJsonSchema(input, 'input')) as Tool['inputSchema'],
    outputSchema: (outputs.length === 1 ? outputs[0] : { type: 'object', anyOf: outputs }) as Tool['outputSchema'],
    annotations: {
      title: host!.title,
      readOnlyHint: annotations.every((a) => a.readOnlyHint),
      destructiveHint: annotations.some((a) => a.destructiveHint),
      idempotentHint: annotations.every((a) => a.idempotentHint),
      openWorldHint: annotations.some((a) => a.openWorldHint),
    },
    // MCP Apps: the tool's result is shown in the live view app (mcp/app.ts).
    ...(appMeta ? { _meta: appMeta } : {}),
    // A client may run it as a task (mcp/tasks.ts): 2025-11-25's experimental tasks read this.
    ...(TASK_TOOLS.has(host!.name) ? { execution: { taskSupport: 'optional' as const } } : {}),
  };
}

/**
 * Schema keywords that say nothing a model can use, left out of tools/list (each costs tokens on every turn): the
 * key type of a record, and the safe-integer range zod gives every integer. Every bound the server enforces stays in
 * (`minimum`, `maxLength`, `maxItems`, ...): a model that is not told a limit finds it by an error.
 */
function slim(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(slim);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'propertyNames' && Object.keys(value as object).length === 1) continue;
    if ((key === 'maximum' || key === 'minimum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    // "Not empty" is no limit a model plans for; an empty string is refused with a clear error.
    if (key === 'minLength' && value === 1) continue;
    // `additionalProperties: false` too: the server refuses unknown fields with a clear error either way.
    if (key === 'additionalProperties' && (value === false || (value && typeof value === 'object' && !Object.keys(value).length))) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, slim(v)])) : slim(value);
  }
  return out;
}
