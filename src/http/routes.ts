import { z } from 'zod';
import { AgentExecuteRequest } from '../core/agent/schema.js';
import { ServiceError } from '../core/errors.js';
import { NavigateRequest, NavigateResponse } from '../core/navigate.js';
import type { BrowserService } from '../core/service.js';
import { extractionObject, newActionId } from '../door.js';
import { VERSION } from '../version.js';
import { BinaryBody, ok, operationBody } from './envelope.js';
import { openApiDocument } from './openapi.js';
import { profileRoutes } from './profile-routes.js';
import { route, type Route } from './route.js';
import {
  ActBody,
  ActResponse,
  AgentExecuteResponse,
  MAX_ACT_BODY_BYTES,
  ObserveBody,
  ObserveResponse,
  ScreenshotRequest,
  EndSessionResponse,
  ExtractRequest,
  ExtractResponse,
  HealthResponse,
  SessionListResponse,
  SessionResponse,
  StartSessionRequest,
  MAX_START_BODY_BYTES,
} from './schemas.js';
import { EndSessionRequest } from '../core/state/index.js';

let openApi: Record<string, unknown> | undefined;

/** 200 with the hosts and the room left while a session can start; 503 with the same data in error.details otherwise. */
function health(service: BrowserService) {
  const { ready, hosts, capacityLeft } = service.readiness();
  const instanceId = service.config.instanceId;
  const about = { version: VERSION, ...(instanceId ? { instanceId } : {}), hosts, capacityLeft };
  if (ready) return ok({ status: 'ok' as const, ...about });
  const why = hosts.some((host) => host.accepting)
    ? 'this instance has --max-sessions sessions open'
    : 'every browser host is down or full';
  throw new ServiceError('browser_unavailable', `No new session can start here now: ${why}.`, {
    details: { status: 'unavailable', ...about },
  });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/healthz',
    operationId: 'Health',
    summary: 'Readiness for load balancers: 200 when a new session can start here, 503 browser_unavailable when none can.',
    response: HealthResponse,
    auth: false,
    errorStatuses: [503],
    handle: ({ service }) => health(service),
  }),
  route({
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'OpenApi',
    summary: 'This API as an OpenAPI 3.1 document, generated from the schemas that validate the requests.',
    response: z.record(z.string(), z.unknown()).describe('OpenAPI 3.1 document.'),
    auth: false,
    handle: () => (openApi ??= openApiDocument(routes)),
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/start',
    operationId: 'SessionStart',
    summary: 'Start an isolated browser session (its own cookies, storage and page, at about:blank).',
    body: StartSessionRequest,
    bodyLimit: MAX_START_BODY_BYTES,
    response: SessionResponse,
    auth: true,
    handle: async ({ service, owner, body }) => ok(await service.startSession(owner, body)),
  }),
  route({
    method: 'GET',
    path: '/v1/sessions',
    operationId: 'SessionList',
    summary:
      "List the caller's open sessions on every server instance; ?local=true lists this instance's only. Peers that did not answer are named in data.unavailable.",
    response: SessionListResponse,
    auth: true,
    handle: async ({ service, owner, peerSessions, ctx }) => {
      const local = service.listSessions(owner);
      if (!peerSessions) return ok({ sessions: local });
      const remote = await peerSessions(ctx.signal!);
      return ok({ sessions: [...local, ...remote.sessions], ...(remote.unavailable.length ? { unavailable: remote.unavailable } : {}) });
    },
  }),
  route({
    method: 'GET',
    path: '/v1/sessions/{id}',
    operationId: 'SessionGet',
    summary: 'A session: current URL, timestamps, expiry and recent page events.',
    response: SessionResponse,
    auth: true,
    handle: ({ service, owner, params }) => ok(service.getSession(owner, params.id!)),
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/navigate',
    operationId: 'SessionNavigate',
    summary: 'Navigate the browser of the session to a URL.',
    body: NavigateRequest,
    response: NavigateResponse,
    streams: true,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => operationBody(await service.navigate(owner, params.id!, body, ctx)),
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/extract',
    operationId: 'SessionExtract',
    summary:
      'Extract data from the page: {pageText} with no options, {extraction} for an instruction, or an object valid against a JSON Schema.',
    body: ExtractRequest,
    response: ExtractResponse,
    streams: true,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => {
      const { streamResponse: _stream, ...options } = body;
      const outcome = await service.extract(owner, params.id!, options, ctx);
      return operationBody(outcome, extractionObject(outcome));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/observe',
    operationId: 'SessionObserve',
    summary: 'The elements one can act on, each {ref, description, method, arguments}; with an instruction, those a model picks.',
    body: ObserveBody,
    response: ObserveResponse,
    streams: true,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => {
      const { streamResponse: _stream, ...request } = body;
      return operationBody(await service.observe(owner, params.id!, request, ctx));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/act',
    operationId: 'SessionAct',
    summary:
      'One action on the page, {action: {ref, method, arguments}} or {instruction}, and what it changed. ' +
      `Bodies up to ${MAX_ACT_BODY_BYTES} bytes (uploads up to 25 MiB decoded).`,
    body: ActBody,
    response: ActResponse,
    streams: true,
    bodyLimit: MAX_ACT_BODY_BYTES,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => {
      const { streamResponse: _stream, ...request } = body;
      return operationBody(await service.act(owner, params.id!, request, ctx));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/screenshot',
    operationId: 'SessionScreenshot',
    summary:
      'A screenshot (viewport, full page or one element by ref), answered as the image bytes with their content type; ' +
      'headers x-image-width, x-image-height, x-action-id. At most 2000 px a side and 2 MiB.',
    body: ScreenshotRequest,
    response: z.string(),
    binary: ['image/png', 'image/jpeg'],
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => {
      const { result } = await service.screenshot(owner, params.id!, body, ctx);
      return new BinaryBody(result.mimeType, result.image, {
        'x-image-width': String(result.width),
        'x-image-height': String(result.height),
        'x-action-id': newActionId(),
      });
    },
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/agentExecute',
    operationId: 'SessionAgentExecute',
    summary: 'Run the autonomous agent on the session until the instruction is done or maxSteps is reached.',
    body: AgentExecuteRequest,
    response: AgentExecuteResponse,
    streams: true,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => {
      const { streamResponse: _stream, ...request } = body;
      return operationBody(await service.agentExecute(owner, params.id!, request, ctx));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/end',
    operationId: 'SessionEnd',
    summary: 'End the session and free its browser context; {saveProfile: true} first saves it to the profile it started from.',
    body: EndSessionRequest,
    response: EndSessionResponse,
    auth: true,
    handle: async ({ service, owner, params, body }) => {
      await service.endSession(owner, params.id!, body);
      return { success: true };
    },
  }),
  ...profileRoutes,
];

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/** The route for a method and path; `allowed` lists the methods of a path that exists under another method. */
export function matchRoute(method: string, pathname: string): { match?: RouteMatch; allowed: string[] } {
  const allowed: string[] = [];
  // A literal path (/v1/sessions/start) wins over a pattern that would also match it (/v1/sessions/{id}).
  const literal = routes.filter((candidate) => candidate.path === pathname);
  for (const candidate of literal.length ? literal : routes) {
    const params = matchPath(candidate.path, pathname);
    if (!params) continue;
    if (candidate.method === method || (method === 'HEAD' && candidate.method === 'GET'))
      return { match: { route: candidate, params }, allowed };
    allowed.push(candidate.method);
  }
  return { allowed };
}

function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i]!;
    if (part.startsWith('{')) {
      if (!got[i]) return undefined;
      try {
        params[part.slice(1, -1)] = decodeURIComponent(got[i]!);
      } catch {
        return undefined;
      }
    } else if (part !== got[i]) {
      return undefined;
    }
  }
  return params;
}
