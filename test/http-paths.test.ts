import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, rawRequest, startHttp, type TestHttp } from './http-fixture.js';

const KEY = 'key-a';

describe('paths are matched as sent', () => {
  let server: TestHttp;

  beforeAll(async () => {
    server = await startHttp({ apiKeys: [KEY] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a path with "..", ".", "//" or "\\" segments is 404 not_found (raw request line, no client normalisation), and reaches no route', async () => {
    const id = (await api(server.url, 'POST', '/v1/sessions/start', { key: KEY, body: {} })).json.data.id as string;
    const headers = { 'x-svc-api-key': KEY, 'content-type': 'application/json' };
    const paths = [
      `/v1/sessions/${id}/navigate/../end`,
      `/v1/sessions/${id}/navigate/%2e%2e/end`,
      `/v1/sessions/${id}/navigate/.%2E/end`,
      `/v1/sessions/${id}/./end`,
      `/v1/sessions/x/../${id}/end`,
      `/v1//sessions/${id}/end`,
      `/v1\\sessions\\${id}\\end`,
      `//v1/sessions/${id}/end`,
    ];
    for (const path of paths) {
      const answer = await rawRequest(server.port, { method: 'POST', path, headers, body: '{}' });
      expect({ path, status: answer.status, code: answer.json?.error?.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
    const mcp = await rawRequest(server.port, { method: 'POST', path: '/v1/../mcp', headers, body: '{}' });
    expect(mcp.status).toBe(404);
    // None of them ended the session.
    const info = await api(server.url, 'GET', `/v1/sessions/${id}`, { key: KEY });
    expect(info.status).toBe(200);
    // The canonical path still works, with a query string too.
    const ended = await rawRequest(server.port, { method: 'POST', path: `/v1/sessions/${id}/end?x=1`, headers, body: '{}' });
    expect(ended.status).toBe(200);
  });
});
