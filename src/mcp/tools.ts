import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { annotationsOf, callInput, mcpInput, operations as allOperations, type AnyOperation } from '../core/operations/index.js';
import { toJsonSchema } from '../core/validation.js';
import { answerForm } from '../door.js';

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

export function buildTools(operations: readonly AnyOperation[] = allOperations): McpTool[] {
  const hosts = operations.filter((operation) => !operation.mcp?.foldInto);
  for (const operation of operations) {
    const host = operation.mcp?.foldInto;
    if (host && !hosts.some((candidate) => candidate.name === host))
      throw new Error(`Operation ${operation.name} is folded into "${host}", which is not an MCP tool of its own.`);
  }
  return hosts.map((host) => {
    const members = [host, ...operations.filter((operation) => operation.mcp?.foldInto === host.name)];
    return { name: host.name, operations: members, listing: listing(members) };
  });
}

/** Which operation a call runs: the host's, or the folded one named by `operation`. */
export function pickOperation(tool: McpTool, args: Record<string, unknown>): { operation?: AnyOperation; args: Record<string, unknown> } {
  if (tool.operations.length === 1) return { operation: tool.operations[0], args };
  const { operation: name, ...rest } = args;
  if (name === undefined || name === tool.name) return { operation: tool.operations[0], args: rest };
  return { operation: tool.operations.find((operation) => operation.name === name), args: rest };
}

function listing([host, ...folded]: AnyOperation[]): Tool {
  const hostInput = mcpInput(host!);
  let input: z.ZodObject = hostInput;
  let description = host!.description;
  if (folded.length) {
    const names = folded.map((operation) => operation.name) as [string, ...string[]];
    const extra: Record<string, z.ZodType> = {};
    for (const operation of folded)
      for (const [key, field] of Object.entries(callInput(operation).shape))
        if (!(key in hostInput.shape) && !(key in extra)) extra[key] = (field as z.ZodType).optional();
    input = hostInput.extend({ ...extra, operation: z.enum(names).optional() });
    description += folded.map((operation) => ` operation=${operation.name}: ${operation.description}`).join('');
  }
  const outputs = [host!, ...folded].map((operation) => toJsonSchema(answerForm(operation).structuredSchema(operation), 'output'));
  const annotations = [host!, ...folded].map(annotationsOf);
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
  };
}

/** Bounds a model never needs to pick a value (lengths, ranges, key patterns) cost tokens on every turn; the server still checks them. */
const CHECKED_BY_SERVER = new Set([
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'propertyNames',
]);

/** The input schema as tools/list shows it: the same shape and descriptions, without the bounds in CHECKED_BY_SERVER and closed objects' `additionalProperties: false`. */
function slim(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(slim);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (CHECKED_BY_SERVER.has(key)) continue;
    // `additionalProperties: false` too: the server refuses unknown fields with a clear error either way.
    if (key === 'additionalProperties' && (value === false || (value && typeof value === 'object' && !Object.keys(value).length))) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, slim(v)])) : slim(value);
  }
  return out;
}
