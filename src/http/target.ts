import { ServiceError } from '../core/errors.js';

export interface RequestTarget {
  pathname: string;
  search: string;
  /** False when the path as sent differs from its normalised form (`.`/`..` segments, `//`, `\`, a non-origin form). */
  canonical: boolean;
}

/**
 * The request line's path and query. Routes are matched on the path as sent: the URL parser would resolve
 * `/v1/sessions/ID/navigate/../end` to `/v1/sessions/ID/end`, so a path that normalises to something else is no route.
 */
export function requestTarget(raw: string | undefined): RequestTarget {
  const target = raw ?? '/';
  const { pathname, search } = new URL(target, 'http://localhost');
  const query = target.indexOf('?');
  const sent = query === -1 ? target : target.slice(0, query);
  return { pathname, search, canonical: sent.startsWith('/') && sent === pathname };
}

export function nonCanonicalPath(method: string, raw: string | undefined): ServiceError {
  const sent = (raw ?? '').split('?')[0]!.slice(0, 200);
  return new ServiceError(
    'not_found',
    `No route ${method} ${sent}: paths are matched as sent, without "." or ".." segments, "//" or "\\". The API is described at /v1/openapi.json.`,
  );
}
