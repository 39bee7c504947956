import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBundleServer } from './fixtures/bundle-host.js';
import { cleanNpmEnv, startLocalRegistry, type LocalRegistry } from './fixtures/local-registry.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

const exec = promisify(execFile);

interface Packed {
  filename: string;
  size: number;
  files: Array<{ path: string }>;
}

/**
 * The package as a registry would hand it out: `npm pack` of the built project, installed in an empty directory from
 * a registry on loopback (the lockfile's packages, from npm's cache), its bin driven over MCP stdio as a client would.
 */
describe('the packed package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bsm-package-'));
  const npmEnv = (registry: LocalRegistry) =>
    cleanNpmEnv({
      npm_config_registry: registry.url,
      npm_config_cache: join(dir, 'npm-cache'),
      npm_config_userconfig: join(dir, 'npmrc'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      npm_config_yes: 'true',
    });
  let packed: Packed;
  let registry: LocalRegistry;
  let site: SiteServer;

  beforeAll(async () => {
    writeFileSync(join(dir, 'npmrc'), '');
    // dist/ is what `prepare` builds (npm ci, npm pack); scripts/test.sh rebuilds it when src/ is newer.
    const { stdout } = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: ROOT,
      env: cleanNpmEnv(),
    });
    packed = (JSON.parse(stdout) as Packed[])[0]!;
    [registry, site] = await Promise.all([startLocalRegistry(join(ROOT, 'package-lock.json')), startSiteServer()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([registry?.close(), site?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('ships the built server and its types, and nothing else: no sources, tests, benchmarks or source maps', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/cli.js', 'dist/index.js', 'dist/index.d.ts']),
    );
    expect(
      paths.filter((path) => !/^dist\/.+\.(js|d\.ts)$/.test(path) && !['package.json', 'README.md', 'LICENSE'].includes(path)),
    ).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(manifest.bin).toEqual({ 'browser-session-mcp': 'dist/cli.js' });
    expect(readFileSync(join(ROOT, 'dist/cli.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    // README states the size; this bound catches a folder swept in by mistake.
    expect(packed.size).toBeLessThan(1_000_000);
  });

  it('installed from its tarball in an empty directory, its bin answers MCP on stdio: tools, a session, a local page, the end', async () => {
    const project = join(dir, 'empty');
    await exec('mkdir', ['-p', project]);
    await exec('npm', ['install', join(dir, packed.filename)], { cwd: project, env: npmEnv(registry), timeout: 240_000 });
    expect(registry.missing).toEqual([]);

    const transport = new StdioClientTransport({
      command: join(project, 'node_modules', '.bin', 'browser-session-mcp'),
      args: [],
      cwd: project,
      env: cleanNpmEnv({ LOG_LEVEL: 'warn' }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'package-test', version: '1.0.0' });
    await client.connect(transport, { timeout: 120_000 });
    try {
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['session_start', 'navigate', 'extract', 'act', 'session_end']),
      );
      expect(client.getServerVersion()?.version).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);

      const started = await call('session_start', {});
      expect(started.isError, JSON.stringify(started.content)).toBeFalsy();
      const sessionId = (started.structuredContent as { id: string }).id;
      const navigated = await call('navigate', { sessionId, url: site.url('/index.html') });
      expect(navigated.isError, JSON.stringify(navigated.content)).toBeFalsy();
      expect((navigated.structuredContent as { status: number }).status).toBe(200);
      expect((await call('session_end', { sessionId })).structuredContent).toEqual({ success: true });
    } finally {
      await client.close();
    }
  }, 300_000);

  it('npm run bundle builds an MCP Bundle that, unpacked as a desktop host does, starts and runs a session', async () => {
    const bundle = join(dir, 'browser-session-mcp.mcpb');
    await exec('bash', [join(ROOT, 'scripts/bundle.sh'), bundle], { cwd: ROOT, env: npmEnv(registry), timeout: 240_000 });
    const unpacked = join(dir, 'unpacked');
    await exec(process.execPath, [join(ROOT, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js'), 'unpack', bundle, unpacked], {
      timeout: 120_000,
    });
    expect(registry.missing).toEqual([]);
    const server = await startBundleServer(unpacked);
    try {
      const started = await server.call('session_start', {});
      const sessionId = (started.structuredContent as { id: string }).id;
      const navigated = await server.call('navigate', { sessionId, url: site.url('/index.html') });
      expect(navigated.isError, JSON.stringify(navigated.content)).toBeFalsy();
      await server.call('session_end', { sessionId });
    } finally {
      await server.close();
    }
  }, 300_000);

  it('runs with npx from the tarball, as `npx ./browser-session-mcp-<version>.tgz`', async () => {
    const { stdout } = await exec('npx', [`./${packed.filename}`, '--version'], { cwd: dir, env: npmEnv(registry), timeout: 240_000 });
    expect(stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  }, 300_000);
});
