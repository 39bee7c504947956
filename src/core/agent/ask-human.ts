import { ServiceError } from '../errors.js';
import { agentAsks, LIVE_DEFAULTS, type LiveViews } from '../live/index.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import type { ToolOutcome } from './tools.js';

export interface AskHumanRun {
  session: Session;
  live: LiveViews | undefined;
  ctx: OperationContext;
  signal: AbortSignal;
  /** How long to wait for Done; default LIVE_DEFAULTS.askHumanTimeoutMs. */
  timeoutMs?: number;
}

/**
 * The agent's ask_human: with a door that can reach a person (MCP URL elicitation, an SSE event) the run pauses, the
 * queue still held, until they press Done (`timeout` fails the step); no model is called meanwhile. Without one, the
 * run stops and its result carries the interactive link, for the caller to show and run the agent again afterwards.
 */
export async function askHuman(reason: string, run: AskHumanRun): Promise<ToolOutcome> {
  const { session, live, ctx, signal } = run;
  const timeoutMs = run.timeoutMs ?? LIVE_DEFAULTS.askHumanTimeoutMs;
  if (!live?.served)
    throw new ServiceError('not_implemented', 'No live view is served here, so no person can be asked; go on alone or finish with done.');
  if (!ctx.askHuman) {
    const view = await live.create(session, { interactive: true, expiresInMs: timeoutMs });
    return {
      text: 'Stopped: a person has to act first.',
      done: {
        success: false,
        message: `A person is needed. ${agentAsks(reason)} Open ${view.url} to act on the page, press Done, then run the agent again on this session.`,
        humanHelp: { url: view.url, reason, expiresAt: view.expiresAt },
      },
    };
  }
  ctx.progress?.({ message: `waiting for a person: ${reason}`, data: { stage: 'ask_human', reason } });
  await live.askHuman(session, { reason, timeoutMs, signal, notify: ctx.askHuman });
  return { text: 'The person pressed Done. The page is as they left it: read it again before acting.' };
}
