import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findBrowserExecutable } from '../src/core/browser.js';

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
});
