import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACT_INPUT_BYTES as MAX_ACT_BODY_BYTES } from '../src/core/act/index.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { api, readSse } from './http-fixture.js';
import { findAction } from './fixtures/refs.js';

interface Observed {
  ref: string;
  description: string;
  method: string;
  arguments: Record<string, unknown>;
}

describe('act, observe and screenshot over REST (default popup policy)', () => {
  const fixture = useSiteHttp();
  let id: string;

  const post = (path: string, body: unknown) => api(fixture.server.url, 'POST', `/v1/sessions/${id}${path}`, { body });
  const observe = async (): Promise<Observed[]> => {
    const res = await post('/observe', {});
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.data.result.actions;
  };
  const screenshot = (body: unknown) =>
    fetch(`${fixture.server.url}/v1/sessions/${id}/screenshot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    id = (await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id;
  });

  it('fills and submits a login form by refs; act answers the envelope, and streams as SSE on request', async () => {
    await post('/navigate', { url: fixture.site.url('/agent/login.html') });
    const actions = await observe();
    const filled = await post('/act', { action: { ...findAction(actions, /textbox: Username/), arguments: { value: 'alice' } } });
    expect(filled.status).toBe(200);
    expect(filled.json).toMatchObject({
      success: true,
      data: { actionId: expect.any(String), result: { success: true, pageChanged: true } },
    });
    expect(filled.json.data.result.diff.added.join('\n')).toContain('alice');
    await post('/act', { action: { ...findAction(actions, /textbox: Password/), arguments: { value: 'correct horse battery' } } });
    const res = await fetch(`${fixture.server.url}/v1/sessions/${id}/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-stream-response': 'true' },
      body: JSON.stringify({ action: findAction(actions, /button: Sign in/) }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    const finished = events.find((event) => event.event === 'finished')!;
    expect(finished.data.data.result).toMatchObject({ navigated: true, url: fixture.site.url('/agent/account.html') });
    expect(finished.data.data.result.pageText).toContain('Signed in as alice');
  });

  it('answers results a timer renders 200 ms after the click, with what act waited for', async () => {
    await post('/navigate', { url: fixture.site.url('/settle/timer.html?ms=200') });
    const res = await post('/act', { action: findAction(await observe(), /button: Search flights/) });
    expect(res.status).toBe(200);
    expect(res.json.data.result.diff.added).toContain('3 flights from Vienna found after 200 ms');
    expect(res.json.data.result.settled).toMatchObject({ waitedMs: expect.any(Number), waitedFor: expect.any(String) });
    expect(res.json.data.result.settled.waitedFor).not.toBe('timeout');
  });

  it('answers a screenshot as image bytes with their content type and size headers', async () => {
    const png = await screenshot({});
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await png.arrayBuffer());
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1280, 800]);
    expect([png.headers.get('x-image-width'), png.headers.get('x-image-height')]).toEqual(['1280', '800']);
    const jpeg = await screenshot({ format: 'jpeg', quality: 50 });
    expect(jpeg.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await jpeg.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    const bad = await screenshot({ format: 'gif' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('invalid_argument');
  });

  it('answers ref_not_found 404, invalid_argument 400, element_covered 409 and 413 over the body limit; the session stays usable', async () => {
    await post('/navigate', { url: fixture.site.url('/act/widgets.html') });
    const actions = await observe();
    const unknown = await post('/act', { action: { ref: '0-9999', method: 'click' } });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'ref_not_found']);
    expect(unknown.json.error.message).toMatch(/read the page again/);
    const misfit = await post('/act', { action: { ...findAction(actions, /button: Add one/), method: 'check' } });
    expect([misfit.status, misfit.json.error.code]).toEqual([400, 'invalid_argument']);
    const both = await post('/act', { action: findAction(actions, /button: Add one/), instruction: 'click it' });
    expect([both.status, both.json.error.code]).toEqual([400, 'invalid_argument']);
    const covered = await post('/act', { action: findAction(actions, /button: Pay now/), timeoutMs: 500 });
    expect([covered.status, covered.json.error.code]).toEqual([409, 'element_covered']);
    const huge = 'A'.repeat(MAX_ACT_BODY_BYTES);
    const tooBig = await post('/act', {
      action: { ...findAction(actions, /Attachment/), method: 'upload', arguments: { files: [{ name: 'big.bin', contentBase64: huge }] } },
    });
    expect([tooBig.status, tooBig.json.error.code]).toEqual([413, 'payload_too_large']);
    const upload = await post('/act', {
      action: {
        ...findAction(actions, /Attachment/),
        method: 'upload',
        arguments: { files: [{ name: 'note.txt', mimeType: 'text/plain', contentBase64: Buffer.from('hello file').toString('base64') }] },
      },
    });
    expect(upload.status, JSON.stringify(upload.json)).toBe(200);
    expect(upload.json.data.result.diff.added.join('\n')).toContain('Uploaded note.txt (10 bytes, text/plain): hello file');
    const added = await post('/act', { action: findAction(actions, /button: Add one/) });
    expect(added.json.data.result.diff.added.join('\n')).toContain('Clicked 1 times');
  });

  it('still closes popups by default and keeps one tab', async () => {
    const nav = await post('/navigate', { url: fixture.site.url('/popup.html') });
    expect(nav.status).toBe(200);
    await expect
      .poll(async () =>
        (await api(fixture.server.url, 'GET', `/v1/sessions/${id}`)).json.data.recentEvents.some(
          (e: { type: string }) => e.type === 'popup',
        ),
      )
      .toBe(true);
    expect((await api(fixture.server.url, 'GET', `/v1/sessions/${id}`)).json.data.tabs).toEqual([
      { tabId: expect.any(String), url: fixture.site.url('/popup.html'), active: true },
    ]);
  });

  it('describes the three routes in the OpenAPI document', async () => {
    const doc = (await api(fixture.server.url, 'GET', '/v1/openapi.json')).json;
    expect(doc.paths['/v1/sessions/{id}/act'].post.responses['200'].content).toHaveProperty('text/event-stream');
    expect(doc.paths['/v1/sessions/{id}/observe'].post.requestBody).toBeDefined();
    expect(Object.keys(doc.paths['/v1/sessions/{id}/screenshot'].post.responses['200'].content)).toEqual([
      'image/png',
      'image/jpeg',
      // The JSON form (Accept: application/json): the image as contentBase64 beside its metadata.
      'application/json',
    ]);
    expect(doc.components.schemas.SessionActResponse).toBeDefined();
  });
});
