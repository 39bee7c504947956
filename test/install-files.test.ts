import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildTools } from '../src/mcp/tools.js';
import { startBundleServer } from './fixtures/bundle-host.js';
import { errorCode, ROOT } from './fixtures/mcp-stdio.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { useStarted } from './fixtures/use-started.js';

const exec = promisify(execFile);
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
const pkg = read('package.json') as { name: string; version: string; license: string; mcpName: string };

/** The files that put the server in a desktop client (manifest.json, the MCP Bundle's) and in the MCP Registry (server.json). */
describe('manifest.json (MCP Bundle)', () => {
  const manifest = read('manifest.json');

  it("is accepted by mcpb's own validator", async () => {
    const { stdout } = await exec(
      process.execPath,
      [join(ROOT, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js'), 'validate', 'manifest.json'],
      {
        cwd: ROOT,
      },
    );
    expect(stdout).toContain('Manifest schema validation passes');
  });

  it('agrees with package.json and lists the tools the server has, by their titles', () => {
    expect(manifest).toMatchObject({ name: pkg.name, version: pkg.version, license: pkg.license });
    expect(manifest.server).toMatchObject({
      type: 'node',
      entry_point: 'dist/cli.js',
      mcp_config: { command: 'node', args: ['${__dirname}/dist/cli.js'] },
    });
    expect(manifest.tools).toEqual(buildTools().map((tool) => ({ name: tool.name, description: tool.listing.title })));
  });

  it('asks for the model keys as secrets and for what a desktop user sets, each with a default so no field reaches the server unfilled', () => {
    const config = manifest.user_config as Record<string, { type: string; sensitive?: boolean; default?: unknown; required?: boolean }>;
    expect(Object.keys(config).sort()).toEqual(
      ['anthropic_api_key', 'browser_path', 'egress_policy', 'headed', 'model', 'openai_api_key', 'profiles_directory'].sort(),
    );
    for (const key of ['openai_api_key', 'anthropic_api_key']) expect(config[key]).toMatchObject({ type: 'string', sensitive: true });
    expect(config.headed).toMatchObject({ type: 'boolean', default: false });
    expect(config.profiles_directory!.type).toBe('directory');
    for (const [name, field] of Object.entries(config)) {
      expect(field.default, name).toBeDefined();
      expect(field.required, name).toBeFalsy();
    }
    const used = Object.values(manifest.server.mcp_config.env as Record<string, string>).map(
      (value) => /^\$\{user_config\.(\w+)\}$/.exec(value)?.[1],
    );
    expect(used.sort()).toEqual(Object.keys(config).sort());
  });

  describe('started as a desktop host starts it (the repository has the bundle layout: dist/ and node_modules/)', () => {
    const fixture = useStarted<{ site: SiteServer }>(async (state) => {
      state.site = await startSiteServer();
    });

    it('with every field left empty: tools, and a session on a local page', async () => {
      const server = await startBundleServer(ROOT);
      try {
        expect(Object.values(server.config.env).every((value) => !value.includes('${'))).toBe(true);
        expect((await server.client.listTools()).tools).toHaveLength(buildTools().length);
        const started = await server.call('session_start', {});
        const sessionId = (started.structuredContent as { id: string }).id;
        const navigated = await server.call('navigate', { sessionId, url: fixture.site.url('/index.html') });
        expect(navigated.isError, JSON.stringify(navigated.content)).toBeFalsy();
        // No key was given: an instruction is refused naming the ways to get a model, not sent with a key that is "".
        const extracted = await server.call('extract', { sessionId, instruction: 'What is the title?' });
        expect(errorCode(extracted)).toBe('model_not_configured');
        await server.call('session_end', { sessionId });
      } finally {
        await server.close();
      }
    }, 180_000);

    it('with egress policy "public" set, the setting reaches the server: a loopback page is refused', async () => {
      const server = await startBundleServer(ROOT, { egress_policy: 'public', headed: false });
      try {
        const started = await server.call('session_start', {});
        const sessionId = (started.structuredContent as { id: string }).id;
        const navigated = await server.call('navigate', { sessionId, url: fixture.site.url('/index.html') });
        expect(errorCode(navigated)).toBe('url_not_allowed');
        await server.call('session_end', { sessionId });
      } finally {
        await server.close();
      }
    }, 180_000);
  });
});

describe('server.json (MCP Registry)', () => {
  const server = read('server.json');

  it('names the npm package by its mcpName, version and stdio transport, within the registry schema 2025-12-11', () => {
    expect(server.$schema).toBe('https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
    expect(server.name).toBe(pkg.mcpName);
    // The registry's rules for these fields: reverse-DNS name with one slash, a description of at most 100 characters,
    // one exact version (no range, not "latest").
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(pkg.mcpName).toMatch(/^io\.github\.[^/]+\//);
    expect(server.description.length).toBeGreaterThan(0);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(server.version).toBe(pkg.version);
    expect(server.packages).toHaveLength(1);
    expect(server.packages[0]).toMatchObject({
      registryType: 'npm',
      registryBaseUrl: 'https://registry.npmjs.org',
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: 'stdio' },
    });
  });

  it('describes only variables the server reads, keys as secrets', () => {
    const variables = server.packages[0].environmentVariables as Array<{ name: string; isSecret?: boolean }>;
    const sources = ['src/cli.ts', 'src/core/browser.ts', 'src/core/llm/index.ts']
      .map((file) => readFileSync(join(ROOT, file), 'utf8'))
      .join('\n');
    for (const variable of variables) expect(sources, variable.name).toMatch(new RegExp(`\\b${variable.name}\\b`));
    expect(variables.filter((variable) => variable.name.endsWith('_API_KEY')).every((variable) => variable.isSecret)).toBe(true);
  });
});
