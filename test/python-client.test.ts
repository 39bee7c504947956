import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startFakeLLM, type FakeLLM, type FakeReply } from './fixtures/fake-llm.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { startHttp, type TestHttp } from './http-fixture.js';

const PYTHON_DIR = fileURLToPath(new URL('../python/', import.meta.url));
const KEYS = ['py-key-a', 'py-key-b'];
/** The key of the second server, which lets a key hold one session: its refusals (429 session_limit, Retry-After) test retries. */
const LIMITED_KEY = 'py-key-limited';

/**
 * Loopback-only control of the in-process fake model server for the Python tests: POST /enqueue with a JSON array
 * of FakeReply, GET /requests for what the model received, POST /reset. The replies are the same scripts the
 * TypeScript tests use; nothing answers by itself.
 */
async function startFakeControl(fake: FakeLLM): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && req.url === '/enqueue') {
        fake.enqueue(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeReply[]));
        return reply(200, { ok: true });
      }
      if (req.method === 'POST' && req.url === '/reset') {
        fake.reset();
        return reply(200, { ok: true });
      }
      if (req.method === 'GET' && req.url === '/requests')
        return reply(
          200,
          fake.requests.map(({ provider, path, headers, body }) => ({
            provider,
            path,
            authorization: headers.authorization ?? null,
            body,
          })),
        );
      reply(404, { error: `no route ${req.method} ${req.url}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs a command to its end, at most `timeoutMs`, keeping stdout and stderr together as the user would see them. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PYTHON_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command}: ${err.message} (the Python client's tests need python3 on PATH)`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('Python client (python/) against the REST API', () => {
  let site: SiteServer;
  let fake: FakeLLM;
  let control: Awaited<ReturnType<typeof startFakeControl>>;
  let server: TestHttp;
  let limited: TestHttp;
  let profileDir: string;

  beforeAll(async () => {
    site = await startSiteServer();
    profileDir = await mkdtemp(join(tmpdir(), 'python-profiles-'));
    fake = await startFakeLLM();
    control = await startFakeControl(fake);
    const service = new BrowserService({
      logger: silentLogger(),
      // API keys make the HTTP door default to egress "public"; the local site and model server are on loopback.
      egressPolicy: 'all',
      model: 'openai/gpt-4.1-mini',
      env: { OPENAI_API_KEY: 'sk-server', OPENAI_BASE_URL: fake.openaiBaseURL },
      profiles: { dir: join(profileDir, 'profiles'), secret: 'python-client-test-secret', keyFile: join(profileDir, 'unused.key') },
    });
    server = await startHttp({ apiKeys: KEYS }, service);
    limited = await startHttp(
      { apiKeys: [LIMITED_KEY] },
      new BrowserService({ logger: silentLogger(), egressPolicy: 'all', maxSessionsPerKey: 1 }),
    );
  });
  afterAll(async () => {
    await limited?.close();
    await server?.close();
    await control?.close();
    await fake?.close();
    await site?.close();
    await rm(profileDir, { recursive: true, force: true });
  });

  it('passes its unittest suite: every call form, schemas, agent options, act/observe/screenshot, storage state and profiles, errors and their classes, the OpenAPI check, SSE, context managers, the async client and retries', async () => {
    const env = {
      ...process.env,
      PYTHONPATH: PYTHON_DIR,
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
      SVC_BASE_URL: server.url,
      SVC_API_KEY: KEYS[0],
      SVC_OTHER_API_KEY: KEYS[1],
      SITE_URL: site.origin,
      FAKE_LLM_CONTROL: control.url,
      FAKE_LLM_OPENAI_BASE_URL: fake.openaiBaseURL,
      SVC_LIMITED_BASE_URL: limited.url,
      SVC_LIMITED_API_KEY: LIMITED_KEY,
    };
    const { code, output } = await run('python3', ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', '.'], env, 300_000);
    expect(code, output).toBe(0);
    const ran = Number(/^Ran (\d+) tests? in/m.exec(output)?.[1] ?? 0);
    expect(ran, output).toBeGreaterThanOrEqual(106);
    expect(output, output).toMatch(/^OK\b/m);
    // The server tests skip themselves without the environment above; here every one of them must have run.
    expect(output, output).not.toContain('needs the test server');
    // Every session the Python tests started was ended by them (their context managers, end() and Client.close()).
    expect(server.service.sessions.size).toBe(0);
    expect(limited.service.sessions.size).toBe(0);
  }, 330_000);
});
