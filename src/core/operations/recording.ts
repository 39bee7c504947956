import { z } from 'zod';
import { ActionLogEntrySchema } from '../recording/index.js';
import { defineOperation, type BinaryResult } from './define.js';

/**
 * A session's action log and its Playwright trace (docs/recording.md). One MCP tool, session_log: the log, or
 * with `operation: "session_trace"` the trace zip as an embedded resource. Neither is itself logged or traced.
 */

const ActionLogOutput = z.object({
  entries: z.array(ActionLogEntrySchema),
  dropped: z.number().int().describe('Older entries let go (the log keeps 1,000).'),
});

export const sessionLog = defineOperation({
  name: 'session_log',
  title: 'Action log and trace of a session',
  description: "A session's action log (actionId, arguments, outcome, URL per call).",
  summary: 'The action log: the last 1,000 operations with actionId, masked arguments, times, outcome, page events and URL.',
  input: z.object({}).strict(),
  output: ActionLogOutput,
  kind: 'read',
  idempotent: true,
  openWorld: false,
  answer: 'plain',
  example: {},
  rest: { method: 'GET', path: '/v1/sessions/{id}/log', operationId: 'SessionLog', quick: true },
  text: (log) =>
    [
      `${log.entries.length} operations${log.dropped ? ` (${log.dropped} older dropped)` : ''}.`,
      ...log.entries.map((e) => `${e.startedAt} ${e.operation} ${e.actionId} ${e.outcome}${e.errorCode ? ` ${e.errorCode}` : ''} ${e.url}`),
    ].join('\n'),
  run: async (_input, { service, owner, sessionId }) => ({ result: service.actionLog(owner, sessionId), pageEvents: [] }),
});

export const sessionTrace = defineOperation({
  name: 'session_trace',
  title: 'Playwright trace of a session',
  description: 'the Playwright trace zip (sessions started with record).',
  summary:
    'The Playwright trace so far as a zip (npx playwright-core show-trace), secrets scrubbed; 409 recording_not_enabled unless started with record.',
  input: z.object({}).strict(),
  output: z.object({ bytes: z.number().int() }),
  kind: 'read',
  openWorld: false,
  answer: 'plain',
  binary: { mediaTypes: ['application/zip'] },
  mcp: { foldInto: 'session_log' },
  example: {},
  rest: {
    method: 'POST',
    path: '/v1/sessions/{id}/trace',
    operationId: 'SessionTrace',
    // In 0.1 the trace was at /recording while the MCP tool session_recording was the log: one word, two things.
    aliases: [{ path: '/v1/sessions/{id}/recording', operationId: 'SessionRecording', until: '0.3.0' }],
  },
  text: ({ bytes }) => `Trace zip, ${bytes} bytes (open with npx playwright-core show-trace).`,
  run: async (_input, { service, owner, sessionId }) => {
    const zip = await service.recording(owner, sessionId);
    return { result: { bytes: zip, mediaType: 'application/zip', info: { bytes: zip.length } } satisfies BinaryResult, pageEvents: [] };
  },
});
