import { ERROR_STATUS } from '../core/errors.js';
import { toJsonSchema } from '../core/validation.js';
import { VERSION } from '../version.js';
import { API_KEY_HEADER } from './auth.js';
import { ErrorBody } from './errors.js';
import type { Route } from './route.js';
import { SSE_EVENTS } from './sse.js';

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/ErrorBody' };

function errorResponse(description: string): Json {
  return { description, content: { 'application/json': { schema: ERROR_REF } } };
}

/** Error statuses a route can answer, each with the codes that map to it. */
function errorResponses(route: Route): Json {
  const statuses = new Map<number, string[]>();
  for (const [code, status] of Object.entries(ERROR_STATUS)) statuses.set(status, [...(statuses.get(status) ?? []), code]);
  const wanted = route.auth ? [...statuses.keys()] : [403, 404, 405, 500, ...(route.errorStatuses ?? [])];
  return Object.fromEntries(
    wanted
      .filter((status) => route.auth || status !== 401)
      .sort((a, b) => a - b)
      .map((status) => [String(status), errorResponse(`Error codes: ${statuses.get(status)!.join(', ')}.`)]),
  );
}

function operation(route: Route): Json {
  const parameters: Json[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' }, description: 'Session identifier.' });
  }
  if (route.streams) {
    parameters.push({
      name: 'x-stream-response',
      in: 'header',
      required: false,
      schema: { type: 'string', enum: ['true', 'false'] },
      description: '`true` answers text/event-stream.',
    });
  }
  const get = route.method === 'GET';
  if (get && route.body) {
    const input = toJsonSchema(route.body, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(input.properties ?? {}))
      parameters.push({ name, in: 'query', required: input.required?.includes(name) ?? false, schema });
  }
  const json: Json = { schema: { $ref: `#/components/schemas/${route.operationId}Response` } };
  const success: Json = route.binary
    ? {
        description: 'Success: the bytes; with Accept: application/json, the JSON envelope with the bytes in data.contentBase64.',
        content: {
          ...Object.fromEntries(route.binary.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }])),
          'application/json': json,
        },
      }
    : { description: 'Success.', content: { 'application/json': json } };
  if (route.streams) {
    (success.content as Json)['text/event-stream'] = {
      schema: { type: 'string' },
      description: `Events in order: ${SSE_EVENTS.join(', ')} (log zero or more times; exactly one of finished, whose data is the JSON body above, or error, whose data is an ErrorBody).`,
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(parameters.length ? { parameters } : {}),
    ...(route.body && !get
      ? {
          requestBody: {
            required: hasRequiredField(route),
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.operationId}Request` } } },
          },
        }
      : {}),
    responses: { '200': success, ...errorResponses(route) },
    ...(route.deprecated ? { deprecated: true } : {}),
    ...(route.auth ? {} : { security: [] }),
  };
}

/** A body is required when its schema has a required field; `{}` may be sent as no body at all. */
function hasRequiredField(route: Route): boolean {
  const input = toJsonSchema(route.body!, 'input') as { required?: string[] };
  return (input.required?.length ?? 0) > 0;
}

/** The OpenAPI 3.1 document of the REST surface, generated from the route table and its zod schemas. */
export function openApiDocument(routes: Route[]): Json {
  const schemas: Json = { ErrorBody: toJsonSchema(ErrorBody, 'output') };
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    if (route.body && route.method === 'POST') schemas[`${route.operationId}Request`] = toJsonSchema(route.body, 'input');
    schemas[`${route.operationId}Response`] = toJsonSchema(route.response, 'output');
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'browser-session-mcp REST API',
      version: VERSION,
      description:
        `Isolated real-browser sessions: ${routes.flatMap((route) => (route.operation ? [route.operation.name] : [])).join(', ')}. ` +
        'The same core serves MCP at /mcp.',
    },
    servers: [{ url: '/' }],
    security: [{ ApiKey: [], ProjectId: [] }, { ApiKey: [] }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER },
        ProjectId: {
          type: 'apiKey',
          in: 'header',
          name: 'x-svc-project-id',
          description: 'Deprecated and ignored: keys are scoped to one project.',
        },
      },
      schemas,
    },
    paths,
  };
}
