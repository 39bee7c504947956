import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { reported, startOptionsSite, type OptionsSite } from './fixtures/options-site.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import { connectMcpHttp } from './fixtures/mcp-http.js';

const PYTHON_DIR = fileURLToPath(new URL('../python/', import.meta.url));

/** The options every door sends; each door's answer and the page it gives must be the same. */
const OPTIONS = {
  viewport: { width: 700, height: 500 },
  locale: 'fr-FR',
  timezoneId: 'America/Sao_Paulo',
  userAgent: 'DoorsTest/2.0',
  extraHTTPHeaders: { 'X-Door': 'same' },
  blockResources: ['image'],
  timeoutMs: 30_000,
};
const SHOWN = { ...OPTIONS, extraHTTPHeaders: { 'X-Door': '***' } };

/** What the probe page reports that the options decide. */
function decided(report: Record<string, unknown> | undefined) {
  const { innerWidth, innerHeight, userAgent, locale, timeZone, offset } = report ?? {};
  return { innerWidth, innerHeight, userAgent, locale, timeZone, offset };
}

const PYTHON_SCRIPT = `
import json, sys
from browser_session_mcp import Client
with Client() as client:
    session = client.sessions.start(
        viewport={"width": 700, "height": 500}, locale="fr-FR", timezone_id="America/Sao_Paulo",
        user_agent="DoorsTest/2.0", extra_http_headers={"X-Door": "same"}, block_resources=["image"], timeout_ms=30000,
    )
    session.navigate(sys.argv[1])
    text = session.page.extract()["pageText"]
    print(json.dumps({"options": session.info.options, "pageText": text}))
    session.end()
`;

function runPython(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PYTHON_SCRIPT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`python3 exited ${code}: ${err}`));
    });
  });
}

describe('session options through every door', () => {
  let site: OptionsSite;
  let server: TestHttp;
  let lib: BrowserSessions;

  beforeAll(async () => {
    site = await startOptionsSite();
    server = await startHttp();
    lib = new BrowserSessions({ logger: silentLogger(), egressPolicy: 'all' });
  });
  afterAll(async () => {
    await lib?.close();
    await server?.close();
    await site?.close();
  });

  it('MCP, REST, the library and Python start the same session from the same options', async () => {
    const probe = site.url('/probe');

    const library = await lib.startSession(OPTIONS as Parameters<BrowserSessions['startSession']>[0]);
    await library.page.goto(probe);
    const fromLibrary = { options: library.info().options, page: decided(reported((await library.page.extract()).pageText, 'PROBE')) };
    await library.end();

    const started = await api(server.url, 'POST', '/v1/sessions/start', { body: OPTIONS });
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const id = started.json.data.id as string;
    await api(server.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: probe } });
    const text = (await api(server.url, 'POST', `/v1/sessions/${id}/extract`, { body: {} })).json.data.result.pageText as string;
    const fromRest = { options: started.json.data.options, page: decided(reported(text, 'PROBE')) };
    await api(server.url, 'POST', `/v1/sessions/${id}/end`);

    const { client } = await connectMcpHttp(server.url, { name: 'options-test' });
    let fromMcp;
    try {
      const start = (await client.callTool({ name: 'session_start', arguments: OPTIONS })) as CallToolResult;
      expect(start.isError, JSON.stringify(start.content)).toBeFalsy();
      const sessionId = (start.structuredContent as { id: string }).id;
      await client.callTool({ name: 'navigate', arguments: { sessionId, url: probe } });
      const read = (await client.callTool({ name: 'extract', arguments: { sessionId } })) as CallToolResult;
      const pageText = (read.content[0] as { text: string }).text;
      fromMcp = { options: (start.structuredContent as { options: unknown }).options, page: decided(reported(pageText, 'PROBE')) };
      await client.callTool({ name: 'session_end', arguments: { sessionId } });
    } finally {
      await client.close();
    }

    const printed = await runPython({ ...process.env, PYTHONPATH: PYTHON_DIR, PYTHONDONTWRITEBYTECODE: '1', SVC_BASE_URL: server.url }, [
      probe,
    ]);
    const python = JSON.parse(printed) as { options: unknown; pageText: string };
    const fromPython = { options: python.options, page: decided(reported(python.pageText, 'PROBE')) };

    // São Paulo has had no daylight saving since 2019: UTC-3 on the fixed date.
    const expected = {
      options: SHOWN,
      page: { innerWidth: 700, innerHeight: 500, userAgent: 'DoorsTest/2.0', locale: 'fr-FR', timeZone: 'America/Sao_Paulo', offset: 180 },
    };
    expect(fromLibrary).toEqual(expected);
    expect(fromRest).toEqual(expected);
    expect(fromMcp).toEqual(expected);
    expect(fromPython).toEqual(expected);
    // The header reached the site from every door.
    expect(site.requests.filter((request) => request.path === '/probe' && request.headers['x-door'] === 'same')).toHaveLength(4);
  }, 180_000);

  it('invalid options are invalid_argument naming the field over REST and MCP', async () => {
    const rest = await api(server.url, 'POST', '/v1/sessions/start', { body: { device: 'Pixel7' } });
    expect(rest.status).toBe(400);
    expect(rest.json.error.code).toBe('invalid_argument');
    expect(rest.json.error.message).toContain('device');
    expect(rest.json.error.message).toContain('"Pixel 7"');

    const { client } = await connectMcpHttp(server.url, { name: 'options-test' });
    try {
      const result = (await client.callTool({
        name: 'session_start',
        arguments: { viewport: { width: 9000, height: 500 } },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect((result._meta?.error as { code?: string }).code).toBe('invalid_argument');
      expect(JSON.stringify(result.content)).toContain('viewport.width');
    } finally {
      await client.close();
    }
    expect(server.service.sessions.size).toBe(0);
  });
});
