import { z } from 'zod';
import { ReplayRequest, ReplayResult, replay, replayResultText } from '../replay/replay.js';
import { renderScript, ScriptFormat } from '../replay/script.js';
import { runIdOf, type StoredRun } from '../replay/run.js';
import { defineOperation, defineSessionOperation } from './define.js';

/**
 * A session as code, and runs done again without a model (docs/replay.md). MCP folds session_script into session_log
 * (a read) and replay into act (an action): a tool each would cost every client's model the tokens of two more tools.
 */

const ScriptOutput = z.object({
  format: ScriptFormat,
  script: z.string().describe('The code; for json, the run ({steps}) that replay takes.'),
  runId: z.string().describe('The run kept for your key: replay {runId} does it again in any session.'),
  steps: z.number().int(),
  dropped: z.number().int().describe('Older steps let go (a session keeps its last 1,000).'),
});

export const sessionScript = defineOperation({
  name: 'session_script',
  title: 'The session as Playwright code',
  description: 'the session as a Playwright script (format: typescript, test, python, json) and its runId for replay.',
  summary:
    "The session's navigations and actions as a runnable Playwright script: typescript (playwright), test (@playwright/test), python (playwright-python) or json (the run's steps). Secrets are read from environment variables; each step has its actionId. The run is kept for replay {runId}.",
  input: z
    .object({
      format: ScriptFormat.optional(),
      actionId: z.string().min(1).max(100).optional().describe("Only this operation's steps."),
    })
    .strict(),
  output: ScriptOutput,
  kind: 'read',
  idempotent: true,
  openWorld: false,
  answer: 'plain',
  mcp: { foldInto: 'session_log' },
  example: {},
  rest: { method: 'GET', path: '/v1/sessions/{id}/script', operationId: 'SessionScript', quick: true },
  text: (answer) => `${answer.steps} steps, runId ${answer.runId}.\n\n${answer.script}`,
  run: async (input, { service, owner, sessionId }) => {
    const { steps, dropped, viewport } = service.runSteps(owner, sessionId, input.actionId);
    const format = input.format ?? 'typescript';
    const runId = runIdOf(owner, steps);
    await service.runs.put(owner, runId, { steps } satisfies StoredRun);
    const title = input.actionId ? `${sessionId} ${input.actionId}` : sessionId;
    return {
      result: { format, script: renderScript({ steps, title, viewport }, format), runId, steps: steps.length, dropped },
      pageEvents: [],
    };
  },
});

export const replayOperation = defineSessionOperation({
  name: 'replay',
  title: 'Do a recorded run again',
  description:
    'do a recorded run again without a model (runId, steps, or actionId of an earlier operation here). A gone target is healed by one model call if one is configured; otherwise it stops and says why.',
  summary:
    'Replay a recorded run in this session without a model: each step finds its target again by its locator; one that is gone or ambiguous is healed by the model (one call) or stops the replay with what was expected and what the page shows.',
  input: ReplayRequest,
  output: ReplayResult,
  kind: 'destructive',
  streams: true,
  // A run's steps as a model passes them on (session_script's json): their schema is checked, not listed.
  mcp: {
    foldInto: 'act',
    listedInput: () =>
      ReplayRequest.extend({
        steps: z.array(z.record(z.string(), z.unknown())).optional().describe(ReplayRequest.shape.steps.description!),
      }),
  },
  example: { steps: [{ method: 'wait', arguments: { ms: 1 } }] },
  rest: { method: 'POST', path: '/v1/sessions/{id}/replay', operationId: 'SessionReplay' },
  text: replayResultText,
  variables: (input) => input.variables,
  work: async (session, input, { service, owner, ctx }) => replay(session, input, { service, owner, ctx }),
});
