import { z } from 'zod';
import { ServiceError } from './errors.js';

/** The cross-door rules the core needs too: input depth, zod issues -> invalid_argument, zod -> JSON Schema. */

/** Deepest nesting of arrays and objects accepted in any caller-controlled value the service walks recursively. */
export const MAX_INPUT_DEPTH = 100;

/** True when `value` nests arrays/objects deeper than `max`; iterative, so a value of any depth is measured safely. */
export function nestedTooDeep(value: unknown, max = MAX_INPUT_DEPTH): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length) {
    const [node, depth] = pending.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

/** The depth error, naming the limit; `what` starts the sentence ("schema", "The arguments of click"). */
export function tooDeepMessage(what: string): string {
  return `${what} is nested more than ${MAX_INPUT_DEPTH} levels deep (the limit, MAX_INPUT_DEPTH, is ${MAX_INPUT_DEPTH}); flatten it.`;
}

/** Throws `invalid_argument` when `value` is too deep for the recursive walks that follow (mapping, validation). */
export function checkDepth(value: unknown, what: string): void {
  if (nestedTooDeep(value)) throw new ServiceError('invalid_argument', tooDeepMessage(what), { details: { maxDepth: MAX_INPUT_DEPTH } });
}

export interface InvalidIssue {
  /** Dotted path of the offending field, '' for the value itself. */
  path: string;
  message: string;
}

/** Zod's issues as every door reports them: each by its dotted path, and one line joining them. */
export function describeIssues(error: z.ZodError): { issues: InvalidIssue[]; summary: string } {
  const issues: InvalidIssue[] = error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
  return { issues, summary: issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ') };
}

/** The one `invalid_argument` of every door for a value zod refused: the issues in the message and in `details.issues`. */
export function invalidArgument(error: z.ZodError, what: string): ServiceError {
  const { issues, summary } = describeIssues(error);
  return new ServiceError('invalid_argument', `Invalid ${what}: ${summary}`, { details: { issues } });
}

/** Parses `input` with `schema` or throws the one `invalid_argument`; `what` names the input ("arguments for navigate"). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidArgument(parsed.error, what);
  return parsed.data;
}

/** JSON Schema 2020-12 (MCP's and OpenAPI 3.1's dialect) of a zod schema, without its $schema line. */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
