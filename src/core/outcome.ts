import { z } from 'zod';
import type { PageTextPart } from './extract-parts.js';
import type { PageLocation } from './location.js';
import { PageEventSchema, type PageEvent } from './sessions.js';
import { Usage } from './usage.js';

/**
 * The plain result of an operation with its metadata: what the page did meanwhile (dialogs, popups, crashes), the
 * model usage when a model was called, and for extract whether a non-object result was wrapped as `{value}`.
 */
export interface Outcome<T> {
  result: T;
  /** The id of this operation, made once by the core (BrowserService) unless the door gave one as ctx.actionId; the action log and the trace group name it. */
  actionId: string;
  pageEvents: PageEvent[];
  /** Token usage of the operation's model calls; absent when none was made (or, for the agent, inside its result). */
  usage?: Usage;
  /** Set by operations whose result may be wrapped (extract): true when `result` is `{value: <the data>}`. */
  wrapped?: boolean;
  /** act, and extract's page text: the URL and title, when they differ from those the session's answers last showed. */
  location?: PageLocation;
  /** navigate with `pageText`: the page it loaded, as text (the MCP door shows it; the interface's result stays as it is). */
  page?: LoadedPage;
}

/** The page a navigation loaded: where it is, and (the first part of) its text. */
export interface LoadedPage extends PageTextPart {
  url: string;
  title: string;
}

/**
 * What an operation of the table answers: a core outcome, or for operations that run nothing on the page (session
 * management, the log, the trace: `answer: 'plain'`) the same without an actionId.
 */
export type OperationOutcome<T> = Omit<Outcome<T>, 'actionId'> & { actionId?: string };

/** What every door carries beside the result, in one shape: MCP `_meta`, REST `data.*`, the library's `onOutcome`. */
export interface OutcomeMeta {
  actionId: string;
  usage?: Usage;
  pageEvents: PageEvent[];
  wrapped?: boolean;
}

export const OutcomeMetaSchema = z.object({
  actionId: z.string().describe('Id of this operation; the action log and the trace name it.'),
  usage: Usage.optional().describe('Absent when no model was called.'),
  pageEvents: z.array(PageEventSchema).describe('What the page did meanwhile (dialogs, popups, downloads, crashes, blocked requests).'),
  wrapped: z.boolean().optional().describe('extract: true when the schema was not an object schema and the data is in result.value.'),
});

/** The metadata of an outcome: its actionId (or a peer's, when the call was forwarded), usage, page events, wrapping. */
export function outcomeMeta(outcome: OperationOutcome<unknown>, actionId: string | undefined = outcome.actionId): OutcomeMeta {
  if (!actionId) throw new Error('An operation answered with metadata has no actionId (only the core makes them).');
  return {
    actionId,
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    pageEvents: outcome.pageEvents,
    ...(outcome.wrapped !== undefined ? { wrapped: outcome.wrapped } : {}),
  };
}
