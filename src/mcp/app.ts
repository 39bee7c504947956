import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { McpUiResourceMeta, McpUiToolMeta } from '@modelcontextprotocol/ext-apps';
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ListResourcesResult,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { toServiceError } from '../core/errors.js';
import type { BrowserService } from '../core/service.js';
import { VERSION } from '../version.js';
import { liveViewAppPage } from './app-page.js';

/**
 * The live view as an MCP App (the `io.modelcontextprotocol/ui` extension): live_view and agent_execute name a ui://
 * resource, and hosts that render MCP Apps show it in the conversation with the tool's result. The resource embeds
 * the live-view page of the result's link (takeover and Done work there as in any browser). Clients without the
 * extension ignore the `_meta` and keep the link in the text.
 */
export const LIVE_VIEW_APP_URI = 'ui://browser-session-mcp/live-view.html';

/** The tools whose results the app shows: live_view's link, and agent_execute's when the agent stopped for a person. */
const LINKED_TOOLS = new Set(['live_view', 'agent_execute']);

/** The `_meta` of a tool's tools/list entry that links it to the app (the legacy flat key too, as registerAppTool writes). */
export function appToolMeta(toolName: string): Record<string, unknown> | undefined {
  if (!LINKED_TOOLS.has(toolName)) return undefined;
  const ui: McpUiToolMeta = { resourceUri: LIVE_VIEW_APP_URI };
  return { ui, [RESOURCE_URI_META_KEY]: LIVE_VIEW_APP_URI };
}

/** MCP's "resource not found" error code. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * Serves the app's resource on a 2025-11-25 server (before it connects): the `resources` capability, resources/list,
 * resources/read, and an empty resources/templates/list for the clients that ask for it once resources are offered.
 */
export function serveAppResources(server: Server, service: BrowserService): void {
  server.registerCapabilities({ resources: {} });
  server.setRequestHandler(ListResourcesRequestSchema, () => listAppResources(service));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const read = await readAppResource(service, request.params.uri).catch(internalError);
    if (!read) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}. Call resources/list for the resources.`);
    return read;
  });
}

/** A live view that could not be served (stdio's listener failed to open): its message, as a JSON-RPC error. */
function internalError(err: unknown): never {
  const error = toServiceError(err);
  throw new McpError(-32603, `[${error.code}] ${error.message}`);
}

/**
 * resources/list: the app, where this server serves live views. Its `_meta.ui` (the CSP) comes with resources/read:
 * in stdio mode the live view's origin is known once its listener is open, which a listing should not do.
 */
export function listAppResources(service: BrowserService): ListResourcesResult {
  if (!service.live.served) return { resources: [] };
  return {
    resources: [
      {
        uri: LIVE_VIEW_APP_URI,
        name: 'live-view',
        title: 'Live view',
        description: 'Watch a browser session live and take it over (log in, solve a CAPTCHA) until Done, in the conversation.',
        mimeType: RESOURCE_MIME_TYPE,
      },
    ],
  };
}

/**
 * resources/read of the app: its HTML and its `_meta.ui` (the CSP names the live view's origin). Undefined for any
 * other URI, or where no live view is served.
 */
export async function readAppResource(service: BrowserService, uri: string): Promise<ReadResourceResult | undefined> {
  if (uri !== LIVE_VIEW_APP_URI || !service.live.served) return undefined;
  const base = await service.live.base();
  return {
    contents: [
      {
        uri,
        mimeType: RESOURCE_MIME_TYPE,
        text: liveViewAppPage({ base, version: VERSION, bridge: appBridge() }),
        _meta: { ui: resourceMeta(base) },
      },
    ],
  };
}

/**
 * What the host lets the app do: frame the live-view pages (frameDomains) and reach their origin, WebSocket included
 * (connectDomains, for hosts that hold a framed page's connections to the app's list); the person's copy from the
 * page needs clipboard-write.
 */
function resourceMeta(base: string): McpUiResourceMeta {
  const origin = new URL(base).origin;
  const socket = origin.replace(/^http/, 'ws');
  return {
    csp: { frameDomains: [origin], connectDomains: [origin, socket] },
    permissions: { clipboardWrite: {} },
    prefersBorder: true,
  };
}

let bridge: string | undefined;

/**
 * The ext-apps `App` and `PostMessageTransport`, from the package's own browser build (`app-with-deps`, one ES module
 * with its dependencies), read once: the app runs with no network but its live view, so the bundle is inline.
 */
function appBridge(): string {
  bridge ??= readFileSync(createRequire(import.meta.url).resolve('@modelcontextprotocol/ext-apps/app-with-deps'), 'utf8');
  return bridge;
}
