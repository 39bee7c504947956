import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findBrowserExecutable, HOW_TO_GET_A_BROWSER } from '../src/core/browser.js';
import { ROOT } from './fixtures/mcp-stdio.js';

describe('finding a browser', () => {
  // A Playwright download folder with a full Chromium and a headless shell of the same build, as
  // `playwright install chromium` leaves it.
  const root = mkdtempSync(join(tmpdir(), 'bsm-browsers-'));
  const full = join(root, 'chromium-1300', 'chrome-linux64', 'chrome');
  const shell = join(root, 'chromium_headless_shell-1300', 'chrome-headless-shell-linux64', 'chrome-headless-shell');
  for (const file of [full, shell]) {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '');
  }
  const env = { PLAYWRIGHT_BROWSERS_PATH: root, PATH: '' };
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('runs headless sessions in the headless shell, and a headed browser never in it', () => {
    expect(findBrowserExecutable(undefined, env, true)).toEqual({ path: shell, source: 'playwright' });
    expect(findBrowserExecutable(undefined, env, false)?.path).not.toMatch(/headless/);
  });

  it('takes the browser it is given before any it finds', () => {
    expect(findBrowserExecutable('/opt/chrome', env, true)).toEqual({ path: '/opt/chrome', source: 'option' });
    expect(findBrowserExecutable(undefined, { ...env, BROWSER_EXECUTABLE_PATH: '/opt/chrome' }, true)).toEqual({
      path: '/opt/chrome',
      source: 'env',
    });
  });

  it('--check-browser starts the browser it names: a missing --executable-path exits 1 saying so', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', 'src/cli.ts', '--check-browser', ...args],
          { cwd: ROOT, timeout: 120_000 },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const missing = await run(['--executable-path', '/nope']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/the browser \/nope \(--executable-path\) does not start: .*doesn't exist/);
    const found = await run([]);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toMatch(/^(option|env|playwright|system) \S+ \(Chromium \d+\./);
  }, 150_000);

  it('hints name commands this package installs: npx playwright-core, not npx playwright', () => {
    const files = ['src', 'docs', 'python/browser_session_mcp'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(ts|md|py)$/.test(file))
        .map((file) => join(dir, file)),
    );
    const stale = files.filter((file) => /npx playwright (install|show-trace)/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(stale).toEqual([]);
    expect(HOW_TO_GET_A_BROWSER).toContain('npx playwright-core install chromium');
  });
});
