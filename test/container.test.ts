import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { validate } from 'dockerfile-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHROMIUM_ARGS } from '../src/core/browser.js';
import { closedPort } from './fixtures/browser-hosts.js';
import { logLine, readDockerfile, runAsContainer, waitForHealth, type ContainerProcess } from './fixtures/container.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { browserProcessOf, isAlive, processTree, waitFor, type ProcessEntry } from './fixtures/processes.js';
import { api } from './http-fixture.js';

/**
 * The root Dockerfile. No image can be built here (no Docker): the file is linted, and its runtime stage's ENTRYPOINT
 * and CMD are run as the container would run them, from the repository root (the image's WORKDIR holds the same
 * package.json, node_modules and dist) with the image's ENV, on the Chromium the image installs (Debian's packages,
 * at the paths this machine has them).
 */
const text = readFileSync(`${ROOT}Dockerfile`, 'utf8');
const image = readDockerfile(text);
const runtime = image.stages.at(-1)!;
const runs = runtime.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args);
const DEBIAN_HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';

describe('Dockerfile', () => {
  it('has no diagnostics from dockerfile-utils', () => {
    expect(validate(text)).toEqual([]);
  });

  it("installs Debian's chromium and chromium-headless-shell without recommends, on node:20-bookworm-slim", () => {
    expect(image.stages.map((stage) => stage.from)).toEqual(['node:20-bookworm-slim', 'node:20-bookworm-slim']);
    const install = runs.find((run) => /apt-get install/.test(run));
    expect(install).toMatch(/apt-get update/);
    const packages = /apt-get install ((?:-\S+\s+)*)([^&]+)/.exec(install!)!;
    expect(packages[1]).toContain('--no-install-recommends');
    expect(packages[2]!.trim().split(/\s+/)).toEqual(expect.arrayContaining(['chromium', 'chromium-headless-shell', 'fonts-liberation']));
    expect(install).toMatch(/rm -rf \/var\/lib\/apt\/lists/);
  });

  it('runs as a non-root user, with its health checked on /healthz at the port PORT sets', () => {
    expect(image.user).toBeDefined();
    expect(image.user!.split(':')[0]).not.toMatch(/^(root|0)$/);
    expect(image.env.PORT).toBe('8931');
    expect(image.healthcheck!.command.join(' ')).toContain("'http://127.0.0.1:' + process.env.PORT + '/healthz'");
    expect(image.cmd).toEqual(['--transport', 'http', '--host', '0.0.0.0']);
  });

  it('needs no sandbox flag of its own: the server launches Chromium without its sandbox and without /dev/shm', () => {
    expect(DEFAULT_CHROMIUM_ARGS).toEqual(expect.arrayContaining(['--no-sandbox', '--disable-dev-shm-usage']));
  });

  it('builds with scripts off until the sources are in, and copies package.json, node_modules and dist into WORKDIR', () => {
    const build = image.stages[0]!.instructions;
    const ci = build.findIndex((instruction) => /^npm ci\b/.test(instruction.args));
    expect(build[ci]!.args).toContain('--ignore-scripts');
    const sources = build.findIndex((instruction) => instruction.keyword === 'COPY' && /^src\b/.test(instruction.args));
    expect(sources).toBeGreaterThan(ci);
    expect(build.slice(sources).some((instruction) => /npm run build && npm prune --omit=dev/.test(instruction.args))).toBe(true);
    // The repository root stands in for /app below only because the image's WORKDIR holds what the root does.
    expect(image.workdir).toBe('/app');
    const copies = runtime.instructions.filter((instruction) => instruction.keyword === 'COPY').map((instruction) => instruction.args);
    expect(copies).toEqual([
      '--from=build /app/package.json ./',
      '--from=build /app/node_modules ./node_modules',
      '--from=build /app/dist ./dist',
    ]);
  });

  it('sends what the build copies and leaves the rest out of the build context (.dockerignore)', () => {
    const ignored = readFileSync(`${ROOT}.dockerignore`, 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['.git', 'node_modules', 'dist', 'test', 'bench', 'python', 'docs']));
    // The build context's files the build stage copies (its COPY sources; flags such as --chown left out).
    const sent = image.stages[0]!.instructions.filter((instruction) => instruction.keyword === 'COPY').flatMap((copy) =>
      copy.args
        .split(/\s+/)
        .filter((word) => !word.startsWith('--'))
        .slice(0, -1),
    );
    expect(sent).toContain('src');
    const isIgnored = (path: string) => ignored.some((pattern) => path === pattern || path.startsWith(`${pattern}/`));
    expect(sent.filter(isIgnored)).toEqual([]);
  });

  describe('its entrypoint, run as the container runs it', () => {
    const key = randomBytes(16).toString('hex');
    let server: ContainerProcess | undefined;
    afterAll(async () => {
      await server?.stop();
    });

    it("answers /healthz, passes its HEALTHCHECK, runs a session on Debian's headless shell, and leaves no process after SIGTERM", async () => {
      const port = await closedPort();
      // As `docker run -e SVC_API_KEYS=... -e PORT=...`: the image's ENV with those two added.
      const env = { ...image.env, SVC_API_KEYS: key, PORT: String(port) };
      server = runAsContainer([...image.entrypoint, ...image.cmd], env, ROOT);

      const health = await waitForHealth(server, port);
      expect(health.data).toMatchObject({ status: 'ok', hosts: [{ name: 'local' }] });
      // API keys and an address off loopback: internal addresses are refused to the browser and the server.
      expect(logLine(server.stderr(), 'HTTP server listening')).toMatchObject({ auth: 'api-key', egress: 'public' });

      const [command, ...args] = image.healthcheck!.command;
      const check = spawnSync(command!, args, { cwd: ROOT, env: server.env, timeout: 10_000 });
      expect(check.status, String(check.stderr)).toBe(0);

      const base = `http://127.0.0.1:${port}`;
      expect((await api(base, 'POST', '/v1/sessions/start', { body: {} })).status).toBe(401);
      const started = await api(base, 'POST', '/v1/sessions/start', { body: {}, key });
      expect(started.status, JSON.stringify(started.json)).toBe(200);
      const browser = browserProcessOf(server.child.pid!);
      expect(browser?.args.split(' ')[0]).toBe(DEBIAN_HEADLESS_SHELL);
      expect(browser!.args.split(' ')).toEqual(expect.arrayContaining(['--no-sandbox', '--disable-dev-shm-usage']));
      const launched: ProcessEntry[] = processTree(server.child.pid!);
      expect(launched).toContainEqual(browser);
      expect((await api(base, 'POST', `/v1/sessions/${started.json.data.id}/end`, { key })).status).toBe(200);

      const running = server;
      server = undefined;
      expect(await running.stop()).toBe(0);
      expect(await waitFor(() => launched.every((entry) => !isAlive(entry.pid)), 5_000)).toBe(true);
    }, 60_000);
  });
});
