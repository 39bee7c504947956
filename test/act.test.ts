import { beforeEach, describe, expect, it } from 'vitest';
import { screenshot, SCREENSHOT_LIMITS } from '../src/core/act/index.js';
import { requestTexts } from './agent-fixtures.js';
import type { Provider, ReceivedRequest } from './fixtures/fake-llm.js';
import { useModelSite } from './fixtures/model-site.js';
import { rejection } from './fixtures/rejection.js';
import { findAction, refOf } from './fixtures/refs.js';
import { screenshotOperation } from '../src/core/operations/index.js';

const fixture = useModelSite({ sessionPerTest: true });

/** The ref on the line of the page text the model was sent that matches `pattern`. */
const refIn = (request: ReceivedRequest, pattern: RegExp) =>
  refOf(requestTexts(request).find((text) => text.includes('<page>\n')) ?? '', pattern);

/** Width and height as Chromium decodes the image, independent of the server's own header parsing. */
async function decoded(image: Buffer): Promise<{ width: number; height: number }> {
  return (
    await fixture.lib.service.operate('library', fixture.session.id, (s) =>
      s.page.evaluate(async (base64) => {
        const bitmap = await createImageBitmap(new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))]));
        return { width: bitmap.width, height: bitmap.height };
      }, image.toString('base64')),
    )
  ).result;
}

describe('act and observe by ref (no model)', () => {
  it('fills and submits a login form with refs from observe, then answers the new page', async () => {
    await fixture.session.navigate(fixture.site.url('/agent/login.html'));
    const { actions } = await fixture.session.page.observe();
    const username = findAction(actions, /textbox: Username/);
    const password = findAction(actions, /textbox: Password/);
    const signIn = findAction(actions, /button: Sign in/);
    expect([username.method, password.method, signIn.method]).toEqual(['fill', 'fill', 'click']);

    const filled = await fixture.session.page.act({ ...username, arguments: { value: 'alice' } });
    expect(filled).toMatchObject({ success: true, navigated: false, pageChanged: true, action: { ref: username.ref, method: 'fill' } });
    expect(filled.diff!.added.join('\n')).toMatch(/textbox: Username = "alice"/);
    expect(filled.diff!.removed.join('\n')).toMatch(/textbox: Username$/m);
    await fixture.session.page.act({ ...password, arguments: { value: 'correct horse battery' } });

    const submitted = await fixture.session.page.act(signIn);
    expect(submitted).toMatchObject({ success: true, navigated: true, pageChanged: true, url: fixture.site.url('/agent/account.html') });
    expect(submitted.title).toBe('Your account');
    expect(submitted.pageText).toContain('Account balance: 4,217.93 EUR');
    expect(submitted.diff).toBeUndefined();
  });

  it('observe gives each control the method that fits, within an XPath scope too', async () => {
    await fixture.session.navigate(fixture.site.url('/act/widgets.html'));
    const { actions } = await fixture.session.page.observe();
    expect(findAction(actions, /checkbox: Newsletter/).method).toBe('check');
    expect(findAction(actions, /combobox: Country/)).toMatchObject({
      method: 'selectOption',
      description: expect.stringContaining('Belgium'),
    });
    expect(findAction(actions, /button: Add one/).method).toBe('click');

    const country = findAction(actions, /combobox: Country/);
    const selected = await fixture.session.page.act({ ...country, arguments: { values: ['Croatia'] } });
    expect(selected.diff!.added).toContain('Chosen: Croatia');
    await fixture.session.page.act(findAction(actions, /checkbox: Newsletter/));
    expect(findAction((await fixture.session.page.observe()).actions, /checkbox: Newsletter/).method).toBe('uncheck');

    const scoped = await fixture.session.page.observe({ selector: '//div[@id="zone"]' });
    expect(scoped.actions.map((action) => action.description)).toEqual(['button: Pay now']);
  });

  it('answers the lines an action added and removed, states truncation at maxTokens, and an unchanged page', async () => {
    await fixture.session.navigate(fixture.site.url('/act/widgets.html'));
    const { actions } = await fixture.session.page.observe();
    const added = await fixture.session.page.act(findAction(actions, /button: Add one/));
    expect(added).toMatchObject({ pageChanged: true, navigated: false });
    expect(added.diff!.added).toEqual(expect.arrayContaining(['Clicked 1 times', '- Item 1']));
    expect(added.diff!.removed).toEqual(['Clicked 0 times']);
    expect(added.truncated).toBeUndefined();

    const hovered = await fixture.session.page.act({ ref: findAction(actions, /button: Add one/).ref, method: 'hover' });
    expect(hovered).toMatchObject({ pageChanged: false, diff: { added: [], removed: [] } });

    const many = await fixture.session.page.act({ action: findAction(actions, /button: Load many/), maxTokens: 100 });
    expect(many.truncated).toMatch(/^Cut to maxTokens 100: added: \d+ of 300 lines shown, \d+ lines \(\d+ tokens\) left out\./);
    expect(many.diff!.added.length).toBeGreaterThan(0);
    expect(many.diff!.added.length).toBeLessThan(20);
    expect(many.diff!.added[0]).toBe('- Row 1 of the long list that was loaded on demand');
  });

  it('acts on the page itself: scroll, history and waiting', async () => {
    await fixture.session.navigate(fixture.site.url('/agent/chain/one.html'));
    await fixture.session.navigate(fixture.site.url('/agent/chain/two.html'));
    const back = await fixture.session.page.act({ method: 'back' });
    expect(back).toMatchObject({
      navigated: true,
      url: fixture.site.url('/agent/chain/one.html'),
      message: expect.stringMatching(/^Went back/),
    });
    const forward = await fixture.session.page.act({ method: 'forward' });
    expect(forward.url).toBe(fixture.site.url('/agent/chain/two.html'));
    expect((await fixture.session.page.act({ method: 'reload' })).url).toBe(fixture.site.url('/agent/chain/two.html'));
    expect((await fixture.session.page.act({ method: 'scroll', arguments: { direction: 'down' } })).message).toMatch(
      /^Scrolled the page down/,
    );
    const title = (await fixture.session.page.extract()).pageText.split('\n')[0]!.replace(/^#+ /, '');
    expect((await fixture.session.page.act({ method: 'wait', arguments: { text: title } })).message).toContain('is visible');
    const missing = await rejection(
      fixture.session.page.act({ action: { method: 'wait', arguments: { text: 'never there' } }, timeoutMs: 300 }),
    );
    expect(missing.code).toBe('action_timeout');
  });

  it('acts inside an iframe by the refs of observe with iframes', async () => {
    await fixture.session.navigate(fixture.site.url('/agent/iframe-form.html'));
    const { actions } = await fixture.session.page.observe({ iframes: true });
    const name = findAction(actions, /Your name/);
    expect(name.ref).not.toMatch(/^0-/);
    await fixture.session.page.act({ ...name, arguments: { value: 'Bob' } });
    await fixture.session.page.act({ ...findAction(actions, /combobox: Topic/), arguments: { values: ['Support'] } });
    const sent = await fixture.session.page.act(findAction(actions, /button: Send/));
    expect([...(sent.diff?.added ?? []), sent.pageText ?? ''].join('\n')).toContain('Received message from Bob about support.');
  });

  it('uploads a file given as base64 to a file input', async () => {
    await fixture.session.navigate(fixture.site.url('/act/widgets.html'));
    const file = findAction((await fixture.session.page.observe()).actions, /Attachment/);
    const files = [{ name: 'notes.txt', mimeType: 'text/plain', contentBase64: Buffer.from('hello world').toString('base64') }];
    const uploaded = await fixture.session.page.act({ ref: file.ref, method: 'upload', arguments: { files } });
    expect(uploaded.message).toBe(`Uploaded "notes.txt" (11 bytes) to [${file.ref}] ${uploaded.action.description}.`);
    expect(uploaded.diff!.added).toContain('Uploaded notes.txt (11 bytes, text/plain): hello world');
  });
});

describe('bad input leaves the session usable', () => {
  beforeEach(() => fixture.session.navigate(fixture.site.url('/act/widgets.html')));

  it('an unknown ref and a stale one (the page navigated since) are ref_not_found', async () => {
    const { actions } = await fixture.session.page.observe();
    const unknown = await rejection(fixture.session.page.act({ ref: '0-9999', method: 'click' }));
    expect(unknown).toMatchObject({ code: 'ref_not_found', status: 404 });
    expect(unknown.message).toMatch(/read the page again/);

    await fixture.session.navigate(fixture.site.url('/page2.html'));
    const stale = await rejection(fixture.session.page.act(findAction(actions, /button: Add one/)));
    expect(stale.code).toBe('ref_not_found');
    expect(stale.message).toMatch(/no longer on the page.*read the page again/);
  });

  it('a method that does not fit the element, or bad arguments, is invalid_argument', async () => {
    const { actions } = await fixture.session.page.observe();
    const button = findAction(actions, /button: Add one/);
    const fill = await rejection(fixture.session.page.act({ ...button, method: 'fill', arguments: { value: 'x' } }));
    expect(fill.code).toBe('invalid_argument');
    expect(fill.message).toMatch(/^fill does not fit \[\d+(?:-\d+)?\] button "Add one"/);
    const upload = await rejection(
      fixture.session.page.act({ ...button, method: 'upload', arguments: { files: [{ name: 'a.txt', contentBase64: 'aGk=' }] } }),
    );
    expect(upload.code).toBe('invalid_argument');
    expect((await rejection(fixture.session.page.act({ ...button, method: 'fill' }))).message).toMatch(/arguments\.value/);
    expect((await rejection(fixture.session.page.act({ method: 'click' }))).message).toMatch(
      /click needs an element: its ref from the page text, a selector, or x and y/,
    );
    expect((await rejection(fixture.session.page.act({ action: button, instruction: 'click it' }))).code).toBe('invalid_argument');
    expect((await rejection(fixture.session.page.act({}))).code).toBe('invalid_argument');
    expect((await fixture.session.page.act(button)).diff!.added).toContain('Clicked 1 times');
  });

  it('a covered element is element_covered well before the timeout, naming what covers it', async () => {
    const pay = findAction((await fixture.session.page.observe()).actions, /button: Pay now/);
    const started = Date.now();
    const covered = await rejection(fixture.session.page.act({ action: pay, timeoutMs: 8_000 }));
    // A bound, not a benchmark: the cover is named after about a second, not at the caller's timeoutMs.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(covered).toMatchObject({ code: 'element_covered', status: 409 });
    expect(covered.message).toMatch(/^div "Cookie notice" covers \[\d+(?:-\d+)?\] button "Pay now", so click did not happen\./);
    expect(covered.message).not.toContain(String.fromCharCode(27));
    expect((await fixture.session.page.act(findAction((await fixture.session.page.observe()).actions, /button: Add one/))).success).toBe(
      true,
    );
  });
});

describe('screenshot', () => {
  it('answers a PNG of the viewport, a JPEG, and one element', async () => {
    await fixture.session.navigate(fixture.site.url('/act/widgets.html'));
    const png = await fixture.session.page.screenshot();
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(await decoded(png)).toEqual({ width: 1280, height: 800 });
    const jpeg = await fixture.session.page.screenshot({ format: 'jpeg', quality: 50 });
    expect(jpeg.subarray(0, 3).toString('hex')).toBe('ffd8ff');
    expect(await decoded(jpeg)).toEqual({ width: 1280, height: 800 });

    const pay = findAction((await fixture.session.page.observe()).actions, /button: Pay now/);
    const { bytes, info } = (await fixture.lib.service.run(screenshotOperation, 'library', fixture.session.id, { ref: pay.ref })).result;
    expect(await decoded(bytes)).toEqual({ width: info.width, height: info.height });
    expect(info.width).toBeLessThan(200);
    expect(info.height).toBeLessThan(60);
  });

  it('keeps a full-page screenshot of a huge noisy page within the size caps', async () => {
    await fixture.session.navigate(fixture.site.url('/act/huge.html'));
    const { result } = await fixture.lib.service.operate('library', fixture.session.id, (s) => screenshot(s, { fullPage: true }));
    expect(result.bytes).toBeLessThanOrEqual(SCREENSHOT_LIMITS.maxBytes);
    expect(result.image.length).toBe(result.bytes);
    expect(Math.max(result.width, result.height)).toBeLessThanOrEqual(SCREENSHOT_LIMITS.maxSide);
    expect(result).toMatchObject({ clipped: true, mimeType: 'image/jpeg' });
    expect(await decoded(result.image)).toEqual({ width: result.width, height: result.height });
  });
});

describe.each<Provider>(['openai', 'anthropic'])('act and observe by instruction (%s)', (provider) => {
  const model = {
    modelName: `${provider}/${provider === 'openai' ? 'gpt-test-model' : 'claude-test-model'}`,
    modelClientOptions: { apiKey: 'test-key', baseURL: '', maxRetries: 0 },
  };
  beforeEach(() => {
    model.modelClientOptions.baseURL = provider === 'openai' ? fixture.llm.openaiBaseURL : fixture.llm.anthropicBaseURL;
  });

  it('observe keeps only the elements whose refs are on the page', async () => {
    await fixture.session.navigate(fixture.site.url('/act/widgets.html'));
    fixture.llm.enqueue((request) => ({
      json: {
        elements: [
          { ref: refIn(request, /button: Add one/), method: 'click', arguments: {}, description: 'the add button' },
          { ref: '0-4242', method: 'click', arguments: {}, description: 'an invented element' },
        ],
      },
    }));
    let usage: unknown;
    const observed = await fixture.session.page.observe(
      { instruction: 'buttons that add things', ...model },
      { onOutcome: (info) => (usage = info.usage) },
    );
    expect(observed.actions).toEqual([{ ref: expect.any(String), method: 'click', arguments: {}, description: 'the add button' }]);
    expect(usage).toMatchObject({ input_tokens: 100, output_tokens: 20 });
    expect((await fixture.session.page.act(observed.actions[0]!)).diff!.added).toContain('Clicked 1 times');
  });

  it('acts by instruction with a %secret% the model never receives, asking again after an invented ref', async () => {
    const secret = 'correct horse battery';
    await fixture.session.navigate(fixture.site.url('/agent/login.html'));
    fixture.llm.enqueue(
      { json: { ref: '0-777', method: 'fill', arguments: { value: '%password%' }, description: 'password field' } },
      (request) => ({
        json: {
          ref: refIn(request, /textbox: Password/),
          method: 'fill',
          arguments: { value: '%password%' },
          description: 'password field',
        },
      }),
    );
    let usage: unknown;
    const filled = await fixture.session.page.act(
      { instruction: 'type the password %password%', variables: { password: secret }, ...model },
      { onOutcome: (info) => (usage = info.usage) },
    );
    expect(filled.action).toMatchObject({ method: 'fill', arguments: { value: '%password%' } });
    expect(filled.message).toContain('%password%');
    expect(usage).toMatchObject({ input_tokens: 200, output_tokens: 40 });
    expect(fixture.llm.requests).toHaveLength(2);
    expect(requestTexts(fixture.llm.requests[1]!).join('\n')).toContain('"0-777" is not on the page');

    await fixture.session.page.act({
      action: { ...findAction((await fixture.session.page.observe()).actions, /Username/), arguments: { value: 'alice' } },
    });
    fixture.llm.enqueue((request) => ({
      json: { ref: refIn(request, /button: Sign in/), method: 'click', arguments: {}, description: 'sign in' },
    }));
    const submitted = await fixture.session.page.act({ instruction: 'sign in', variables: { password: secret }, ...model });
    expect(submitted).toMatchObject({ navigated: true, url: fixture.site.url('/agent/account.html') });
    for (const request of fixture.llm.requests) expect(JSON.stringify(request.body)).not.toContain(secret);
    expect(JSON.stringify([filled, submitted])).not.toContain(secret);
  });

  it('fails with ref_not_found when the model keeps naming refs that are not on the page', async () => {
    await fixture.session.navigate(fixture.site.url('/act/widgets.html'));
    fixture.llm.fallback = { json: { ref: '0-4242', method: 'click', arguments: {}, description: 'nothing' } };
    const error = await rejection(fixture.session.page.act({ instruction: 'click the unicorn', ...model }));
    expect(error.code).toBe('ref_not_found');
    expect(fixture.llm.requests).toHaveLength(2);
  });
});
