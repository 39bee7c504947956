import { CreateMessageRequestSchema, type CallToolResult, type CreateMessageRequest } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '../src/core/act/index.js';
import { errorCode } from './fixtures/mcp-stdio.js';
import { NO_MODEL_KEYS, useSiteStdio } from './fixtures/site-stdio.js';
import { findAction, refOf } from './fixtures/refs.js';

interface Observed {
  ref: string;
  description: string;
  method: string;
  arguments: Record<string, unknown>;
}
/** act's structuredContent over MCP: the facts; the change itself is in the text. */
interface ActOut {
  success: boolean;
  pageChanged: boolean;
  navigated: boolean;
  ref?: string;
  url?: string;
  title?: string;
}
interface Tab {
  tabId: string;
  url: string;
  active: boolean;
}

/** The scripted client model: each reply is made from the sampling request (whose page text holds the refs). */
const replies: Array<(params: CreateMessageRequest['params']) => string> = [];
const received: Array<CreateMessageRequest['params']> = [];

/** The ref on the first line of a sampling request's messages that matches `pattern`. */
function refIn(params: CreateMessageRequest['params'], pattern: RegExp): string {
  const texts = params.messages.flatMap((message) =>
    (Array.isArray(message.content) ? message.content : [message.content]).map((block) => ('text' in block ? String(block.text) : '')),
  );
  return refOf(texts.join('\n'), pattern);
}

/** PNG width and height from its IHDR chunk. */
function pngSize(image: Buffer): { width: number; height: number } {
  expect(image.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
}

describe('act, observe and screenshot over MCP stdio (--popups tab, no model key: sampling)', () => {
  const fixture = useSiteStdio({ flags: ['--popups', 'tab'], env: NO_MODEL_KEYS, capabilities: { sampling: {} } });
  let sessionId: string;

  const call = (name: string, args: Record<string, unknown> = {}) => fixture.server.call(name, { sessionId, ...args });
  const ok = async (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> => {
    const result = await call(name, args);
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result;
  };
  const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;
  /** observe's lines (`[ref] method {arguments}: description`), whose refs structuredContent lists in the same order. */
  const observe = async (instruction?: string): Promise<Observed[]> => {
    const result = await ok('observe', instruction ? { instruction } : {});
    const actions = textOf(result)
      .split('\n')
      .map((line) => /^\[([^\]]+)\] (\w+)(?: (\{.*?\}))?: (.*)$/.exec(line))
      .filter((match) => match !== null)
      .map(([, ref, method, args, description]) => ({
        ref: ref!,
        method: method!,
        arguments: JSON.parse(args ?? '{}'),
        description: description!,
      }));
    expect(result.structuredContent).toEqual({ refs: actions.map((action) => action.ref) });
    return actions;
  };
  const tabs = async () =>
    ((await fixture.server.call('session_list')).structuredContent as { sessions: Array<{ id: string; tabs: Tab[] }> }).sessions.find(
      (session) => session.id === sessionId,
    )!.tabs;

  beforeAll(async () => {
    fixture.server.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      received.push(request.params);
      const reply = replies.shift();
      if (!reply) throw new Error('no scripted sampling reply left');
      return { role: 'assistant', model: 'client-model', content: { type: 'text', text: reply(request.params) }, stopReason: 'endTurn' };
    });
    sessionId = ((await fixture.server.call('session_start')).structuredContent as { id: string }).id;
  });

  it('lists act, observe and screenshot with output schemas', async () => {
    const { tools } = await fixture.server.client.listTools();
    for (const name of ['act', 'observe', 'screenshot']) expect(tools.find((tool) => tool.name === name)?.outputSchema).toBeDefined();
  });

  it('fills and submits a login form by refs; the text content is compact lines, not JSON', async () => {
    await ok('navigate', { url: fixture.site.url('/agent/login.html') });
    const actions = await observe();
    expect(findAction(actions, /button: Sign in/).method).toBe('click');
    const user = await ok('act', { action: { ...findAction(actions, /textbox: Username/), arguments: { value: 'alice' } } });
    expect(textOf(user).split('\n')[0]).toMatch(/^Filled \[\d+(?:-\d+)?\] textbox "Username" with "alice"\.$/);
    expect(textOf(user)).not.toContain('{');
    await ok('act', {
      action: { ...findAction(actions, /textbox: Password/), arguments: { value: '%pw%' } },
      variables: { pw: 'correct horse battery' },
    });
    const submitted = await ok('act', { action: findAction(actions, /button: Sign in/) });
    const out = submitted.structuredContent as unknown as ActOut;
    expect(out).toMatchObject({ success: true, navigated: true, url: fixture.site.url('/agent/account.html') });
    expect(textOf(submitted)).toMatch(/^Clicked .*\nNew page:\n/);
    expect(textOf(submitted)).toContain('Signed in as alice');
    expect(submitted._meta?.actionId).toEqual(expect.any(String));
  });

  it('shows a same-page change as + and - lines', async () => {
    await ok('navigate', { url: fixture.site.url('/act/widgets.html') });
    const add = findAction(await observe(), /button: Add one/);
    const text = textOf(await ok('act', { action: add }));
    expect(text).toMatch(/^- .*Clicked 0 times/m);
    expect(text).toMatch(/^\+ .*Clicked 1 times/m);
  });

  it('answers a click whose result arrives after a 2 s spinner with the result, and a line saying what it waited for', async () => {
    await ok('navigate', { url: fixture.site.url('/settle/spinner.html') });
    const built = await ok('act', { action: findAction(await observe(), /button: Build report/) });
    expect(built.structuredContent).toMatchObject({ success: true, pageChanged: true });
    expect(built.structuredContent).not.toHaveProperty('navigated');
    expect(textOf(built)).toMatch(/^\+ .*Report ready: 1,284 orders in March/m);
    expect(textOf(built)).toMatch(/^Waited \d+ ms for the page to settle \(network\)\.$/m);
  });

  it('observes by instruction and acts by instruction through the client model (sampling), with no server key', async () => {
    await ok('navigate', { url: fixture.site.url('/act/widgets.html') });
    received.length = 0;
    replies.push((params) =>
      JSON.stringify({
        elements: [{ ref: refIn(params, /button: Add one/), method: 'click', arguments: {}, description: 'the add button' }],
      }),
    );
    const [picked] = await observe('the button that adds one');
    expect(picked).toMatchObject({ method: 'click', description: 'the add button' });
    replies.push((params) =>
      JSON.stringify({
        ref: refIn(params, /combobox: Country/),
        method: 'selectOption',
        arguments: { values: ['Croatia'] },
        description: 'country',
      }),
    );
    const acted = await ok('act', { instruction: 'choose Croatia as the country' });
    expect(textOf(acted)).toMatch(/^\+ .*Chosen: Croatia/m);
    expect(received).toHaveLength(2);
  });

  it('answers a screenshot as image content whose decoded size matches structuredContent', async () => {
    const result = await ok('screenshot');
    const image = result.content.find((block) => block.type === 'image') as { data: string; mimeType: string };
    const bytes = Buffer.from(image.data, 'base64');
    expect(image.mimeType).toBe('image/png');
    expect(pngSize(bytes)).toEqual({ width: 1280, height: 800 });
    expect(result.structuredContent).toEqual({ mimeType: 'image/png', width: 1280, height: 800, bytes: bytes.length });
  });

  it('answers bad input with ref_not_found, invalid_argument, element_covered and payload_too_large (upload over 25 MiB), and the session stays usable', async () => {
    await ok('navigate', { url: fixture.site.url('/act/widgets.html') });
    const actions = await observe();
    expect(errorCode(await call('act', { action: { ref: '0-9999', method: 'click' } }))).toBe('ref_not_found');
    expect(
      errorCode(await call('act', { action: { ...findAction(actions, /button: Add one/), method: 'fill', arguments: { value: 'x' } } })),
    ).toBe('invalid_argument');
    expect(errorCode(await call('act', { action: { ref: '0-1', method: 'teleport' } }))).toBe('invalid_argument');
    const covered = await call('act', { action: findAction(actions, /button: Pay now/), timeoutMs: 500 });
    expect(errorCode(covered)).toBe('element_covered');
    expect(textOf(covered)).toContain('Cookie notice');
    const big = Buffer.alloc(MAX_UPLOAD_BYTES + 1).toString('base64');
    const upload = {
      ...findAction(actions, /Attachment/),
      method: 'upload',
      arguments: { files: [{ name: 'big.bin', contentBase64: big }] },
    };
    expect(errorCode(await call('act', { action: upload }))).toBe('payload_too_large');
    expect(textOf(await ok('act', { action: findAction(actions, /button: Add one/) }))).toMatch(/Clicked 1 times/);
  });

  it('keeps a popup as a tab: listed, selected, acted on and closed', async () => {
    await ok('navigate', { url: fixture.site.url('/popup.html') });
    await expect.poll(async () => (await tabs()).length, { timeout: 10_000 }).toBe(2);
    const popup = (await tabs()).find((tab) => !tab.active)!;
    const selected = await ok('act', { action: { method: 'selectTab', arguments: { tabId: popup.tabId } } });
    expect(textOf(selected)).toContain('Second page');
    expect(textOf(selected)).toMatch(new RegExp(`^Tabs: \\S+ \\S+ \\| ${popup.tabId} \\(active\\) `, 'm'));
    expect(selected.structuredContent).toMatchObject({ success: true, url: popup.url });
    const home = findAction(await observe(), /link: Home/);
    expect((await ok('act', { action: home })).structuredContent).toMatchObject({ navigated: true, url: fixture.site.url('/index.html') });
    const closed = await ok('act', { action: { method: 'closeTab', arguments: { tabId: popup.tabId } } });
    expect((closed.structuredContent as unknown as ActOut).url).toBe(fixture.site.url('/popup.html'));
    expect(await tabs()).toEqual([expect.objectContaining({ active: true, url: fixture.site.url('/popup.html') })]);
    expect(errorCode(await call('act', { action: { method: 'closeTab', arguments: { tabId: (await tabs())[0]!.tabId } } }))).toBe(
      'invalid_argument',
    );
  });
});
