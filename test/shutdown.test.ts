import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { api } from './http-fixture.js';

/** Starts the built server over HTTP on a free port; resolves with its URL once it listens. */
function spawnServer(): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['dist/cli.js', '--transport', 'http', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', SVC_API_KEYS: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address logged; stderr: ${stderr}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk;
      const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, stderr: () => stderr });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
}

describe('SIGTERM with operations in flight', () => {
  let site: SiteServer;

  beforeAll(async () => {
    site = await startSiteServer();
  });
  afterAll(async () => {
    await site?.close();
  });

  it('answers a navigate that never finishes loading with a JSON error (REST and MCP), then exits', async () => {
    const { child, url } = await spawnServer();
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const restSession = (await api(url, 'POST', '/v1/sessions/start')).json.data.id as string;
      const client = new Client({ name: 'shutdown-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      const started = (await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult;
      const mcpSession = (started.structuredContent as { id: string }).id;

      const hang = { url: site.url('/hang'), options: { timeout: 60_000 } };
      const rest = api(url, 'POST', `/v1/sessions/${restSession}/navigate`, { body: hang });
      const mcp = client.callTool({ name: 'navigate', arguments: { sessionId: mcpSession, ...hang } }) as Promise<CallToolResult>;
      // Both pages are loading (their server got both requests): now the server is told to stop.
      await expect.poll(() => site.requests.filter((r) => r.url === '/hang').length, { timeout: 15_000 }).toBe(2);
      child.kill('SIGTERM');

      const restAnswer = await rest;
      expect(restAnswer.status).toBe(503);
      expect(restAnswer.json).toMatchObject({
        success: false,
        error: { code: 'browser_unavailable', message: expect.stringMatching(/shutting down/) },
      });
      const mcpAnswer = await mcp;
      expect(mcpAnswer.isError).toBe(true);
      expect(mcpAnswer._meta?.error).toMatchObject({ code: 'browser_unavailable' });
      await client.close().catch(() => undefined);
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
