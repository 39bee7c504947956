import type { McpUiResourceMeta } from '@modelcontextprotocol/ext-apps';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttp, type TestHttp } from './http-fixture.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { launchViewerBrowser } from './fixtures/live-viewer.js';
import { startAppHost, type AppHost } from './fixtures/mcp-app-host.js';
import { connectMcpHttp, type McpHttpClient } from './fixtures/mcp-http.js';
import { startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

// The live view as an MCP App: a host that renders MCP Apps shows it in the conversation, and a person acts there.
const APP_URI = 'ui://browser-session-mcp/live-view.html';
let site: SiteServer;
let llm: FakeLLM;
let http: TestHttp;
let browser: Browser;
let host: AppHost;
let mcp: McpHttpClient;
let stdio: StdioServer;
let page: Page | undefined;

beforeAll(async () => {
  [site, llm, http, browser, host, stdio] = await Promise.all([
    startSiteServer(),
    startFakeLLM(),
    startHttp(),
    launchViewerBrowser(),
    startAppHost(),
    startStdioServer(),
  ]);
  mcp = await connectMcpHttp(http.url, {
    name: 'mcp-app-host',
    capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } } },
  });
}, 180_000);

afterEach(async () => {
  await page?.close();
  page = undefined;
});

afterAll(async () => {
  await mcp?.client.close();
  await browser?.close();
  await Promise.all([stdio?.close(), http?.close(), host?.close(), site?.close(), llm?.close()]);
});

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;

async function sessionOn(path: string): Promise<string> {
  const sessionId = ((await call('session_start')).structuredContent as { id: string }).id;
  await call('navigate', { sessionId, url: site.url(path) });
  return sessionId;
}

/** The host page with the app rendered from the resource as read over MCP, handed `result` as its tool's result. */
async function renderApp(result: CallToolResult): Promise<{ page: Page; app: Frame }> {
  const read = await mcp.client.readResource({ uri: APP_URI });
  const content = read.contents[0] as { text: string; mimeType?: string; _meta?: Record<string, unknown> };
  host.setApp(content.text, (content._meta?.ui as McpUiResourceMeta | undefined)?.csp);
  page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(host.url);
  await page.evaluate((src) => (window as any).mcpHost.showApp(src), host.appUrl);
  await page.evaluate((sent) => (window as any).mcpHost.sendToolResult(sent), result as any);
  return { page, app: page.frames().find((frame) => frame.url() === host.appUrl)! };
}

/** The live-view page inside the app, once it shows the session's first frame. */
async function liveFrame(shown: Page): Promise<Frame> {
  let live: Frame | undefined;
  await expect
    .poll(() => (live = shown.frames().find((frame) => frame.url().startsWith(`${http.url}/live/`))), { timeout: 15_000 })
    .toBeTruthy();
  await live!.waitForFunction(() => Number(document.body.dataset.frames) > 0, undefined, { timeout: 30_000 });
  return live!;
}

describe('the live view as an MCP App', { timeout: 60_000 }, () => {
  it('tools/list links live_view and agent_execute to the ui:// resource, and resources/read answers it with the live view origin in its CSP', async () => {
    const { tools } = await mcp.client.listTools();
    const linked = (name: string) => tools.find((tool) => tool.name === name)!._meta;
    expect(linked('live_view')).toMatchObject({ ui: { resourceUri: APP_URI }, 'ui/resourceUri': APP_URI });
    expect(linked('agent_execute')).toMatchObject({ ui: { resourceUri: APP_URI } });
    expect(linked('navigate')).toBeUndefined();
    expect(mcp.client.getServerCapabilities()?.resources).toBeDefined();
    const { resources } = await mcp.client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: APP_URI, mimeType: RESOURCE_MIME_TYPE })]);
    const read = await mcp.client.readResource({ uri: APP_URI });
    expect(read.contents).toHaveLength(1);
    const content = read.contents[0] as { text: string; mimeType?: string; _meta?: Record<string, unknown> };
    expect(content.mimeType).toBe('text/html;profile=mcp-app');
    expect(content.text).toMatch(/^<!doctype html>/);
    const ui = content._meta?.ui as McpUiResourceMeta;
    expect(ui.csp?.frameDomains).toEqual([http.url]);
    expect(ui.csp?.connectDomains).toEqual([http.url, http.url.replace(/^http/, 'ws')]);
    const unknown = await mcp.client.readResource({ uri: 'ui://browser-session-mcp/other.html' }).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32002);
  });

  it("shows live_view's link in the host, and a person's click after Take control reaches the session's page", async () => {
    const sessionId = await sessionOn('/live/form.html');
    const result = await call('live_view', { sessionId });
    // A client without the extension still gets the link in the text.
    const { url } = result.structuredContent as { url: string };
    expect((result.content[0] as { text: string }).text).toContain(url);
    const { page: shown, app } = await renderApp(result);
    await expect.poll(() => app.evaluate(() => document.body.dataset.state)).toBe('shown');
    expect(await app.locator('#message').textContent()).toContain('press Done to hand it back');
    const live = await liveFrame(shown);
    expect(live.url()).toBe(url);
    await live.getByRole('button', { name: 'Take control' }).click();
    await expect.poll(() => live.evaluate(() => document.body.dataset.control)).toBe('person');
    // A person clicks the page's button (at 250, 160 of its 1280 x 800) in the image the app shows.
    const box = (await live.locator('#screen').boundingBox())!;
    await shown.mouse.click(box.x + (250 / 1280) * box.width, box.y + (160 / 800) * box.height);
    await live.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => live.evaluate(() => document.body.dataset.control)).toBe('none');
    // The page as the session reads it (its text, wherever the extract result carries it).
    const read = await call('extract', { sessionId });
    expect(JSON.stringify([read.content, read.structuredContent])).toContain('Clicked 1 times');
  });

  it("shows the agent's request for a person from agent_execute's result, with the agent's words", async () => {
    const sessionId = await sessionOn('/live/form.html');
    llm.reset();
    llm.enqueue({ toolCalls: [{ name: 'ask_human', arguments: { reason: 'Press the button on the page.' } }] });
    const result = await call('agent_execute', {
      sessionId,
      agentConfig: {
        provider: 'openai',
        model: 'gpt-test-model',
        options: { apiKey: 'test-key', baseURL: llm.openaiBaseURL, maxRetries: 0 },
      },
      executeOptions: { instruction: 'Press the button', autoScreenshot: false },
    });
    const help = (result.structuredContent as { metadata: { humanHelp: { url: string } } }).metadata.humanHelp;
    const { page: shown, app } = await renderApp(result);
    await expect
      .poll(() => app.locator('#message').textContent())
      .toContain('The agent asks, in its own words: “Press the button on the page.”');
    expect((await liveFrame(shown)).url()).toBe(help.url);
  });

  it('stays empty for a result with nothing to show, and frames no link of another origin', async () => {
    const sessionId = await sessionOn('/live/static.html');
    const { page: shown, app } = await renderApp(await call('session_list'));
    await expect.poll(() => app.evaluate(() => document.body.dataset.state)).toBe('empty');
    await expect.poll(() => shown.locator('#app').evaluate((frame) => frame.getBoundingClientRect().height)).toBe(0);
    const { url } = (await call('live_view', { sessionId })).structuredContent as { url: string };
    const elsewhere = url.replace(http.url, site.url('').replace(/\/$/, ''));
    await shown.evaluate((sent) => (window as any).mcpHost.sendToolResult(sent), {
      content: [{ type: 'text', text: elsewhere }],
      structuredContent: { url: elsewhere, expiresAt: new Date().toISOString(), interactive: true },
    });
    await expect.poll(() => app.evaluate(() => document.body.dataset.state)).toBe('error');
    expect(await app.locator('#error').textContent()).toContain('not hold a live view link of this server');
    expect(shown.frames().some((frame) => frame.url().includes('/live/'))).toBe(false);
  });
});

describe('the live view app over stdio', { timeout: 180_000 }, () => {
  it("names the live view's loopback listener in its CSP, the origin of live_view's links", async () => {
    const tools = (await stdio.client.listTools()).tools;
    expect(tools.find((tool) => tool.name === 'live_view')!._meta).toMatchObject({ ui: { resourceUri: APP_URI } });
    const read = await stdio.client.readResource({ uri: APP_URI });
    const [origin] = (read.contents[0]!._meta?.ui as McpUiResourceMeta).csp!.frameDomains!;
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const sessionId = ((await stdio.call('session_start')).structuredContent as { id: string }).id;
    const { url } = (await stdio.call('live_view', { sessionId })).structuredContent as { url: string };
    expect(new URL(url).origin).toBe(origin);
  });
});
