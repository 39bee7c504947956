import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { agentAsks } from '../core/live/index.js';
import type { HumanRequest } from '../core/operation.js';

/**
 * The agent's ask_human over MCP: when the client declared URL-mode elicitation (MCP 2025-11-25), the person is sent to
 * the live view with an elicitation/create {mode: "url"} on the tool call's stream, and told it is over with
 * notifications/elicitation/complete after Done. Undefined for other clients: the agent then returns the link.
 */
export function urlElicitation(server: Server, relatedRequestId: RequestId): ((request: HumanRequest) => void) | undefined {
  if (!server.getClientCapabilities()?.elicitation?.url) return undefined;
  return (request) => {
    const elicitationId = randomUUID();
    void server
      .elicitInput(
        {
          mode: 'url',
          elicitationId,
          url: request.url,
          message: `The browser agent needs a person. ${agentAsks(request.reason)} Open the live view, act on the page, then press Done.`,
        },
        // The person may take as long as the agent waits; the wait has its own timeout.
        { relatedRequestId, timeout: Date.parse(request.expiresAt) - Date.now() },
      )
      .then((answer) => {
        if (answer.action !== 'accept') request.decline(`The person did not open the live view (the client answered ${answer.action}).`);
      })
      .catch(() => undefined);
    void request.finished.then(() =>
      server
        .createElicitationCompletionNotifier(elicitationId, { relatedRequestId })()
        .catch(() => undefined),
    );
  };
}
