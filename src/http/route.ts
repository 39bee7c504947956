import type { z } from 'zod';
import type { AnyOperation } from '../core/operations/index.js';
import type { OperationContext } from '../core/operation.js';
import type { BrowserService } from '../core/service.js';
import type { PeerListing } from './peer-sessions.js';

export interface RouteCall<B> {
  service: BrowserService;
  /** Scope of the caller's sessions. */
  owner: string;
  params: Record<string, string>;
  body: B;
  ctx: OperationContext;
  /** The request's Accept header: a binary route answers JSON when it asks for JSON only. */
  accept?: string;
  /** Set when peers are configured and the caller wants every instance (no ?local=true, not a forwarded request). */
  peerList?: (path: string, field: string, signal: AbortSignal) => Promise<PeerListing>;
}

/** One REST route: its schemas feed validation and the OpenAPI document; its handler only calls the core. */
export interface Route<B extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST';
  /** OpenAPI-style path, e.g. /v1/sessions/{id}/navigate. */
  path: string;
  operationId: string;
  summary: string;
  /** The input: the JSON body of a POST, the query parameters of a GET. */
  body?: B;
  response: z.ZodType;
  /** The operation the route answers; absent for the door's own routes (health, the API description). */
  operation?: AnyOperation;
  /** Answers Server-Sent Events on request (header x-stream-response: true or body streamResponse: true). */
  streams?: boolean;
  /** Largest body this route reads, bytes (default MAX_BODY_BYTES). */
  bodyLimit?: number;
  /** The media types of a route that answers bytes (a BinaryBody) instead of JSON. */
  binary?: readonly string[];
  /** A former route kept for a while: the OpenAPI document marks it deprecated, its summary says until when. */
  deprecated?: boolean;
  /** False for the routes that reveal nothing: health and the API description. */
  auth: boolean;
  /** Error statuses an unauthenticated route answers besides 403, 404, 405 and 500 (e.g. 503 for readiness). */
  errorStatuses?: number[];
  handle(call: RouteCall<z.infer<B>>): Promise<unknown> | unknown;
}

/** Erases the body type so routes with different bodies share one table. */
export function route<B extends z.ZodType>(definition: Route<B>): Route {
  return definition as unknown as Route;
}
