import { beforeAll, describe, expect, it } from 'vitest';
import { useSiteHttp } from './fixtures/site-http.js';
import { api } from './http-fixture.js';

/** Issue 40 item 8: type goes at the end of a field, and act's text and position arguments are bounded (REST door). */
describe('act arguments: type at the end, bounded selectors, waits and drop positions', () => {
  const fixture = useSiteHttp();
  let id: string;

  const act = (action: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    api(fixture.server.url, 'POST', `/v1/sessions/${id}/act`, { body: { action, ...extra } });
  const value = (selector: string) =>
    api(fixture.server.url, 'POST', `/v1/sessions/${id}/evaluate`, { body: { expression: `document.querySelector('${selector}').value` } });

  beforeAll(async () => {
    id = (await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id;
  });

  it('type adds at the end of a field the focus had left, and over the selection of one that has it', async () => {
    await api(fixture.server.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: fixture.site.url('/act/type-end.html') } });
    for (const [selector, first] of [
      ['#name', 'first second'],
      ['#email', 'ann@example'],
      ['#notes', 'line one\nline two'],
    ] as const) {
      expect((await act({ selector, method: 'fill', arguments: { value: first } })).status).toBe(200);
      // The focus moves away: Playwright's own typing would then start at the beginning ("thirdfirst second").
      expect((await act({ selector: '#other', method: 'type', arguments: { text: 'x' } })).status).toBe(200);
      const typed = await act({ selector, method: 'type', arguments: { text: selector === '#email' ? '.org' : 'third' } });
      expect(typed.status, JSON.stringify(typed.json)).toBe(200);
    }
    expect((await value('#name')).json.data.result.result).toBe('first secondthird');
    expect((await value('#email')).json.data.result.result).toBe('ann@example.org');
    expect((await value('#notes')).json.data.result.result).toBe('line one\nline twothird');
    // A field that has the focus types where its caret is: selectText, then type over the words.
    await act({ selector: '#name', method: 'selectText', arguments: { text: 'second' } });
    await act({ selector: '#name', method: 'type', arguments: { text: '2nd' } });
    expect((await value('#name')).json.data.result.result).toBe('first 2ndthird');
  });

  it('refuses a 100 KB targetSelector and a 900 KB wait text with a short invalid_argument, and cuts long echoes', async () => {
    await api(fixture.server.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: fixture.site.url('/handles/index.html') } });
    const huge = await act({ selector: 'text=Tab stop', method: 'dragTo', arguments: { targetSelector: `css=${'a'.repeat(100_000)}` } });
    expect(huge.status).toBe(400);
    expect(huge.json.error.code).toBe('invalid_argument');
    expect(JSON.stringify(huge.json).length).toBeLessThan(2_000);
    const waited = await act({ method: 'wait', arguments: { text: 'w'.repeat(900_000) } });
    expect(waited.status).toBe(400);
    expect(waited.json.error.code).toBe('invalid_argument');
    expect(JSON.stringify(waited.json).length).toBeLessThan(2_000);
    // Within the bound, a text that never shows is said back cut.
    const long = await act({ method: 'wait', arguments: { text: 'w'.repeat(2_000) } }, { timeoutMs: 300 });
    expect(long.json.error.code).toBe('action_timeout');
    expect(long.json.error.message.length).toBeLessThan(400);
  });

  it('refuses a drop position that is not a point near the target: (1e308, -1e308), or one outside the viewport', async () => {
    await api(fixture.server.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: fixture.site.url('/handles/index.html') } });
    const drag = (position: { x: number; y: number }) =>
      act({ selector: 'text=Tab stop', method: 'dragTo', arguments: { targetSelector: 'text=Drop zone', position } });
    const far = await drag({ x: 1e308, y: -1e308 });
    expect(far.status).toBe(400);
    expect(far.json.error.code).toBe('invalid_argument');
    const outside = await drag({ x: 5_000, y: 5 });
    expect(outside.status).toBe(400);
    expect(outside.json.error).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('outside the viewport') });
    const inside = await drag({ x: 10, y: 5 });
    expect(inside.status, JSON.stringify(inside.json)).toBe(200);
  });
});
