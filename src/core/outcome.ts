import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PageEventSchema, type PageEvent } from './sessions.js';
import { Usage } from './usage.js';

/**
 * The plain result of an operation with its metadata: what the page did meanwhile (dialogs, popups, crashes), the
 * model usage when a model was called, and for extract whether a non-object result was wrapped as `{value}`.
 */
export interface Outcome<T> {
  result: T;
  pageEvents: PageEvent[];
  /** Token usage of the operation's model calls; absent when none was made (or, for the agent, inside its result). */
  usage?: Usage;
  /** Set by operations whose result may be wrapped (extract): true when `result` is `{value: <the data>}`. */
  wrapped?: boolean;
}

/** What every door carries beside the result, in one shape: MCP `_meta`, REST `data.*`, the library's `onOutcome`. */
export interface OutcomeMeta {
  actionId: string;
  usage?: Usage;
  pageEvents: PageEvent[];
  wrapped?: boolean;
}

export const OutcomeMetaSchema = z.object({
  actionId: z.string().describe('Id of this operation, made by the door that answered it.'),
  usage: Usage.optional().describe('Absent when no model was called.'),
  pageEvents: z.array(PageEventSchema).describe('What the page did meanwhile (dialogs, popups, downloads, crashes, blocked requests).'),
  wrapped: z.boolean().optional().describe('extract: true when the schema was not an object schema and the data is in result.value.'),
});

/** The id of one operation, made once per call by the door that answers it. */
export function newActionId(): string {
  return randomUUID();
}

/** The metadata of an outcome with a fresh actionId. */
export function outcomeMeta(outcome: Outcome<unknown>, actionId: string = newActionId()): OutcomeMeta {
  return {
    actionId,
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    pageEvents: outcome.pageEvents,
    ...(outcome.wrapped !== undefined ? { wrapped: outcome.wrapped } : {}),
  };
}
