import type { ExtractionOutcome } from './core/service.js';

/** What the three doors (MCP, REST, library) share and the core has no use for: owner scopes, action ids, object results. */

/** Owner of the sessions of the one local client: stdio, and HTTP when it runs without API keys. */
export const LOCAL_OWNER = 'local';

/** Owner of the sessions opened through the in-process library. */
export const LIBRARY_OWNER = 'library';

/** The id of one operation; a door may give it to the core as ctx.actionId, and answers with the outcome's. */
export { newActionId } from './core/operation.js';

/** Key under which doors whose results must be objects (MCP structuredContent, REST data.result) send a non-object extraction. */
export const WRAPPED_RESULT_KEY = 'value';

/** An extraction as an object: `{value: result}` when the core says the schema was not an object schema. */
export function extractionObject(outcome: ExtractionOutcome): Record<string, unknown> {
  return outcome.wrapped ? { [WRAPPED_RESULT_KEY]: outcome.result } : (outcome.result as Record<string, unknown>);
}
