import { z } from 'zod';
import { listedSessionOptions, SessionInfoSchema, SessionOptions } from '../sessions.js';
import { EndSessionRequest } from '../profiles/index.js';
import { defineOperation } from './define.js';
import { MAX_START_BODY_BYTES } from './profiles.js';

/** Session management: start, list, read and end sessions. Their answers carry no actionId (`answer: 'plain'`). */

export const sessionStart = defineOperation({
  name: 'session_start',
  title: 'Start a browser session',
  description:
    'Start an isolated browser session (own cookies and storage, at about:blank). Pass its id as sessionId to the other tools; end it with session_end (idle sessions expire).',
  summary: 'Start an isolated browser session (its own cookies, storage and page, at about:blank).',
  input: SessionOptions,
  output: SessionInfoSchema,
  kind: 'action',
  session: false,
  answer: 'plain',
  mcp: { listedInput: (config) => (config ? listedSessionOptions(config.sessionIdleTimeoutMs) : SessionOptions) },
  example: {},
  // A storage state may be 5 MiB (src/core/storage).
  rest: { method: 'POST', path: '/v1/sessions/start', operationId: 'SessionStart', quick: true, bodyLimit: MAX_START_BODY_BYTES },
  // The id is what a model needs from this answer; frames, tabs and options stay in structuredContent.
  text: (info) => {
    const idleMinutes = Math.round((Date.parse(info.expiresAt) - Date.parse(info.lastUsedAt)) / 60_000);
    return `Started session ${info.id}${info.host === 'local' ? '' : ` on ${info.host}`}; it ends after ${idleMinutes} min without a call.`;
  },
  run: async (input, { service, owner }) => ({ result: await service.startSession(owner, input), pageEvents: [] }),
});

export const sessionList = defineOperation({
  name: 'session_list',
  title: 'List browser sessions',
  description:
    'List your open browser sessions with their current URL, last use, expiry and recent page events (dialogs, popups, crashes).',
  summary:
    "List the caller's open sessions on every server instance; ?local=true lists this instance's only. Peers that did not answer are named in data.unavailable.",
  input: z.object({}).strict(),
  output: z.object({ sessions: z.array(SessionInfoSchema) }),
  kind: 'read',
  idempotent: true,
  session: false,
  answer: 'plain',
  spansPeers: 'sessions',
  example: {},
  rest: { method: 'GET', path: '/v1/sessions', operationId: 'SessionList', quick: true },
  run: async (_input, { service, owner }) => ({ result: { sessions: service.listSessions(owner) }, pageEvents: [] }),
});

export const sessionGet = defineOperation({
  name: 'session_get',
  title: 'Read a browser session',
  description: 'one session by its sessionId.',
  summary: 'A session: current URL, timestamps, expiry and recent page events.',
  input: z.object({}).strict(),
  output: SessionInfoSchema,
  kind: 'read',
  idempotent: true,
  openWorld: false,
  answer: 'plain',
  mcp: { foldInto: 'session_list' },
  example: {},
  rest: { method: 'GET', path: '/v1/sessions/{id}', operationId: 'SessionGet', quick: true },
  run: async (_input, { service, owner, sessionId }) => ({ result: service.getSession(owner, sessionId), pageEvents: [] }),
});

export const sessionEnd = defineOperation({
  name: 'session_end',
  title: 'End a browser session',
  description: 'End a browser session and free its browser context. The id stops working afterwards.',
  summary: 'End the session and free its browser context.',
  input: EndSessionRequest,
  output: z.object({ success: z.literal(true) }),
  kind: 'destructive',
  openWorld: false,
  answer: 'body',
  example: {},
  rest: { method: 'POST', path: '/v1/sessions/{id}/end', operationId: 'SessionEnd', quick: true },
  run: async (input, { service, owner, sessionId }) => {
    await service.endSession(owner, sessionId, input);
    return { result: { success: true as const }, pageEvents: [] };
  },
});
