import { ServiceError } from '../core/errors.js';
import type { BrowserService } from '../core/service.js';

export interface HttpOptions {
  port: number;
  host: string;
  apiKeys: string[];
  allowedHosts: string[];
}

/** Placeholder until the HTTP surface lands (issue 3). */
export async function serveHttp(_service: BrowserService, _options: HttpOptions): Promise<void> {
  throw new ServiceError('not_implemented', 'The HTTP transport is not available yet; use --transport stdio.');
}
