import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { agentAsks } from '../core/live/index.js';
import type { HumanRequest } from '../core/operation.js';

/** How an elicitation reaches the client of one tool call, under either MCP revision. */
export interface ElicitationChannel {
  /** The client declared URL-mode elicitation. */
  supportsUrl: boolean;
  /** Sends the request and resolves with the client's answer (under 2026-07-28, when it calls the tool again). */
  elicit(params: { mode: 'url'; elicitationId: string; url: string; message: string }, timeoutMs: number): Promise<{ action: string }>;
  /** Tells the client the elicitation is over (2025-11-25's notifications/elicitation/complete); 2026-07-28 has none. */
  complete?(elicitationId: string): Promise<void>;
}

/**
 * A 2025-11-25 tool call's elicitation: elicitation/create sent on the tools/call request's stream, or, for a call run
 * as a task, queued for the client's tasks/result.
 */
export function pushedElicitation(
  server: Server,
  relatedRequestId: RequestId | undefined,
  relatedTask?: { taskId: string },
): ElicitationChannel {
  const related = { ...(relatedRequestId === undefined ? {} : { relatedRequestId }), relatedTask };
  return {
    get supportsUrl() {
      return Boolean(server.getClientCapabilities()?.elicitation?.url);
    },
    elicit: (params, timeout) => server.elicitInput(params, { ...related, timeout }),
    complete: (elicitationId) => server.createElicitationCompletionNotifier(elicitationId, related)(),
  };
}

/**
 * The agent's ask_human over MCP: when the client declared URL-mode elicitation, the person is sent to the live view
 * with an elicitation {mode: "url"} (MCP 2025-11-25: elicitation/create on the tool call's stream, then
 * notifications/elicitation/complete after Done; 2026-07-28: an input_required result). Undefined for other clients:
 * the agent then returns the link.
 */
export function urlElicitation(channel: ElicitationChannel): ((request: HumanRequest) => void) | undefined {
  if (!channel.supportsUrl) return undefined;
  return (request) => {
    const elicitationId = randomUUID();
    void channel
      .elicit(
        {
          mode: 'url',
          elicitationId,
          url: request.url,
          message: `The browser agent needs a person. ${agentAsks(request.reason)} Open the live view, act on the page, then press Done.`,
        },
        // The person may take as long as the agent waits; the wait has its own timeout.
        Date.parse(request.expiresAt) - Date.now(),
      )
      .then((answer) => {
        if (answer.action !== 'accept') request.decline(`The person did not open the live view (the client answered ${answer.action}).`);
      })
      .catch(() => undefined);
    void request.finished.then(() => channel.complete?.(elicitationId).catch(() => undefined));
  };
}
