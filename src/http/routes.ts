import { z } from 'zod';
import { ServiceError } from '../core/errors.js';
import { operations, type AnyOperation } from '../core/operations/index.js';
import type { BrowserService } from '../core/service.js';
import { answerForm } from '../door.js';
import { VERSION } from '../version.js';
import { operationBody, ok, wantsJson } from './envelope.js';
import { openApiDocument } from './openapi.js';
import { route, type Route } from './route.js';
import { HealthResponse } from './schemas.js';

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

const streamResponse = z.boolean().optional().describe('Stream progress as Server-Sent Events.');

/**
 * An operation's route: its input validates the body (or query), its answer form shapes the body. `alias`: a former
 * path of the operation, served the same way and marked deprecated.
 */
function operationRoute(operation: AnyOperation, alias?: { path: string; operationId: string; until: string }): Route {
  const input =
    operation.streams && !('streamResponse' in operation.input.shape) ? operation.input.extend({ streamResponse }) : operation.input;
  return route({
    method: operation.rest.method,
    path: alias?.path ?? operation.rest.path,
    operationId: alias?.operationId ?? operation.rest.operationId,
    summary: alias
      ? `Deprecated: the former path of ${operation.rest.operationId} (${operation.rest.path}), served until ${alias.until}.`
      : (operation.summary ?? operation.description),
    ...(alias ? { deprecated: true } : {}),
    body: input,
    response: answerForm(operation).restSchema(operation),
    operation,
    streams: operation.streams,
    bodyLimit: operation.rest.bodyLimit,
    binary: operation.binary?.mediaTypes,
    auth: true,
    handle: async ({ service, owner, params, body, ctx, accept, peerList }) => {
      const { streamResponse: _stream, ...given } = body as Record<string, unknown>;
      const outcome = await operation.run(given, { service, owner, sessionId: params.id ?? '', ctx });
      const field = operation.spansPeers;
      if (field && peerList) {
        const remote = await peerList(operation.rest.path, field, ctx.signal!);
        const local = outcome.result as Record<string, unknown[]>;
        const merged = { ...local, [field]: [...local[field]!, ...remote.items] };
        const answer = operationBody(operation, { ...outcome, result: merged }) as { data: Record<string, unknown> };
        return remote.unavailable.length ? { ...answer, data: { ...answer.data, unavailable: remote.unavailable } } : answer;
      }
      return operationBody(operation, outcome, operation.binary ? wantsJson(accept, operation.binary.mediaTypes) : false);
    },
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
  ...operations.flatMap((operation) => [
    operationRoute(operation),
    ...(operation.rest.aliases ?? []).map((alias) => operationRoute(operation, alias)),
  ]),
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
