import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';

const KEY_A = 'tenant-a-0123456789abcdef';
const KEY_B = 'tenant-b-fedcba9876543210';

describe('per-key session quota', () => {
  let server: TestHttp;

  beforeAll(async () => {
    server = await startHttp(
      { apiKeys: [KEY_A, KEY_B] },
      new BrowserService({ logger: silentLogger(), maxSessions: 3, maxSessionsPerKey: 2 }),
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it('one key cannot take every session, and its session_limit message tells nothing about other keys', async () => {
    const start = (key: string) => api(server.url, 'POST', '/v1/sessions/start', { key });
    // Key A asks for three at once: two open, the third is refused although the server has room.
    const first = await Promise.all([start(KEY_A), start(KEY_A), start(KEY_A)]);
    expect(first.map((res) => res.status).sort()).toEqual([200, 200, 429]);
    const refused = first.find((res) => res.status === 429)!;
    expect(refused.json.error.code).toBe('session_limit');
    expect(refused.json.error.message).toMatch(/--max-sessions-per-key/);
    // Nothing was started: Retry-After tells a client it may send the start again.
    expect(refused.headers.get('retry-after')).toBe('2');

    // Key B still gets the last slot; once the server is full, B's refusal names no count of A's.
    expect((await start(KEY_B)).status).toBe(200);
    const full = await start(KEY_B);
    expect(full.status).toBe(429);
    expect(full.json.error.code).toBe('session_limit');
    expect(full.json.error.message).not.toMatch(/\d/);
    expect(full.headers.get('retry-after')).toBe('2');

    // Ending one of A's sessions frees A's quota again.
    const id = first.find((res) => res.status === 200)!.json.data.id as string;
    expect((await api(server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY_A })).status).toBe(200);
    expect((await start(KEY_A)).status).toBe(200);
  });

  it('without a per-key limit, the refusal names the limit that was reached: --max-sessions', async () => {
    const single = await startHttp({}, new BrowserService({ logger: silentLogger(), maxSessions: 1 }));
    try {
      const start = () => api(single.url, 'POST', '/v1/sessions/start', {});
      expect((await start()).status).toBe(200);
      const refused = await start();
      expect([refused.status, refused.json.error.code]).toEqual([429, 'session_limit']);
      expect(refused.json.error.message).toMatch(/--max-sessions\)/);
      expect(refused.json.error.message).not.toMatch(/per-key|API key/);
    } finally {
      await single.close();
    }
  });
});
