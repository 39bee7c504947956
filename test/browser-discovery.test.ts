import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findBrowserExecutable, INSTALL_BROWSER_COMMAND, noBrowserFound, type Machine } from '../src/core/browser.js';
import { errorCode, ROOT, startStdioServer } from './fixtures/mcp-stdio.js';

/** A machine of another platform holding exactly these files (and the folders above them). */
function machineWith(platform: NodeJS.Platform, files: string[], env: Record<string, string> = {}): Machine {
  const sep = platform === 'win32' ? '\\' : '/';
  return {
    platform,
    home: platform === 'win32' ? 'C:\\Users\\ada' : platform === 'darwin' ? '/Users/ada' : '/home/ada',
    env: { PATH: '', ...env },
    exists: (path) => files.includes(path),
    list: (dir) => [
      ...new Set(files.filter((file) => file.startsWith(dir + sep)).map((file) => file.slice(dir.length + 1).split(sep)[0]!)),
    ],
  };
}

/** Which of `files` discovery picks, removing each pick in turn: the order it tries them. */
function order(platform: NodeJS.Platform, files: string[], headless = true, env: Record<string, string> = {}): string[] {
  const left = [...files];
  const picked: string[] = [];
  for (;;) {
    const found = findBrowserExecutable(undefined, env, headless, machineWith(platform, left, env));
    if (!found) return picked;
    picked.push(`${found.source} ${found.path}`);
    left.splice(left.indexOf(found.path), 1);
  }
}

const run = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
    const started = Date.now();
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { cwd: ROOT, timeout: 120_000, env: { ...process.env, ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started }),
    );
  });

describe('finding a browser', () => {
  it('on Linux: Playwright cache (newest revision, headless shell first), installed Chrome and Edge, Debian/Ubuntu packages, PATH', () => {
    const cache = '/home/ada/.cache/ms-playwright';
    const files = [
      '/usr/local/bin/chromium',
      '/usr/bin/chromium',
      '/usr/lib/chromium/chromium-headless-shell',
      '/snap/bin/chromium',
      '/opt/microsoft/msedge/msedge',
      '/opt/google/chrome/chrome',
      `${cache}/chromium-999/chrome-linux/chrome`,
      `${cache}/chromium-1300/chrome-linux64/chrome`,
      `${cache}/chromium_headless_shell-1300/chrome-headless-shell-linux64/chrome-headless-shell`,
    ];
    expect(order('linux', files, true, { PATH: '/usr/local/bin' })).toEqual([
      `playwright ${cache}/chromium_headless_shell-1300/chrome-headless-shell-linux64/chrome-headless-shell`,
      `playwright ${cache}/chromium-1300/chrome-linux64/chrome`,
      `playwright ${cache}/chromium-999/chrome-linux/chrome`,
      'installed /opt/google/chrome/chrome',
      'installed /opt/microsoft/msedge/msedge',
      'package /usr/lib/chromium/chromium-headless-shell',
      'package /usr/bin/chromium',
      'package /snap/bin/chromium',
      'path /usr/local/bin/chromium',
    ]);
    // A headed browser is never a headless shell.
    expect(order('linux', files, false, { PATH: '/usr/local/bin' }).filter((line) => /headless/.test(line))).toEqual([]);
  });

  it('on macOS and Windows: Playwright cache, then Chrome, Chromium and Edge where their installers put them', () => {
    const mac = '/Users/ada/Library/Caches/ms-playwright/chromium-1300/chrome-mac-arm64';
    expect(
      order('darwin', [
        '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
        '/Users/ada/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
        '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
        `${mac}/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing`,
      ]),
    ).toEqual([
      `playwright ${mac}/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing`,
      'installed /Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      'installed /Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
      'installed /Users/ada/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    ]);
    const env = {
      LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local',
      PROGRAMFILES: 'C:\\Program Files',
      'PROGRAMFILES(X86)': 'C:\\Program Files (x86)',
    };
    const shell =
      'C:\\Users\\ada\\AppData\\Local\\ms-playwright\\chromium_headless_shell-1300\\chrome-headless-shell-win64\\chrome-headless-shell.exe';
    expect(
      order(
        'win32',
        [
          'C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe',
          'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
          'C:\\Users\\ada\\AppData\\Local\\Google\\Chrome\\Application\\chrome.exe',
          shell,
        ],
        true,
        env,
      ),
    ).toEqual([
      `playwright ${shell}`,
      'installed C:\\Users\\ada\\AppData\\Local\\Google\\Chrome\\Application\\chrome.exe',
      'installed C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
      'installed C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe',
    ]);
  });

  it('takes the browser it is given before any it finds: the option, then BROWSER_EXECUTABLE_PATH, then PLAYWRIGHT_BROWSERS_PATH', () => {
    const machine = machineWith('linux', ['/usr/bin/chromium', '/srv/pw/chromium-1300/chrome-linux64/chrome']);
    expect(findBrowserExecutable('/opt/chrome', {}, true, machine)).toEqual({ path: '/opt/chrome', source: 'option' });
    expect(findBrowserExecutable(undefined, { BROWSER_EXECUTABLE_PATH: '/opt/chrome' }, true, machine)).toEqual({
      path: '/opt/chrome',
      source: 'env',
    });
    const env = { PLAYWRIGHT_BROWSERS_PATH: '/srv/pw' };
    expect(findBrowserExecutable(undefined, env, true, { ...machine, env })).toEqual({
      path: '/srv/pw/chromium-1300/chrome-linux64/chrome',
      source: 'playwright',
    });
  });

  it('with none, the message says where it looked and names the exact commands for the platform', () => {
    const linux = noBrowserFound(machineWith('linux', []));
    expect(linux).toContain(INSTALL_BROWSER_COMMAND);
    expect(linux).toContain('sudo apt-get install -y chromium chromium-headless-shell');
    expect(linux).toContain('/home/ada/.cache/ms-playwright');
    expect(noBrowserFound(machineWith('darwin', []))).toContain('brew install --cask google-chrome');
    expect(noBrowserFound(machineWith('win32', []))).toContain('winget install Google.Chrome');
  });

  it('--check-browser starts the browser it names: a missing --executable-path exits 1 saying so', async () => {
    const missing = await run(['--check-browser', '--executable-path', '/nope']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/the browser \/nope \(--executable-path\) does not start: .*doesn't exist/);
    const found = await run(['--check-browser']);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toMatch(/^(option|env|playwright|installed|package|path) \S+ \(Chromium \d+\./);
  }, 150_000);

  it("install-browser runs Playwright's installer, and where its download host cannot be reached fails naming the other ways", async () => {
    const cache = mkdtempSync(join(tmpdir(), 'bsm-install-'));
    // A download host on loopback that drops every connection, as a host the network does not reach fails the download.
    const host = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    try {
      const result = await run(['install-browser'], {
        PLAYWRIGHT_DOWNLOAD_HOST: `http://127.0.0.1:${(host.address() as AddressInfo).port}`,
        PLAYWRIGHT_BROWSERS_PATH: cache,
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`Installing Playwright's Chromium into ${cache}`);
      expect(result.stderr).toMatch(/Playwright's installer failed \(exit 1/);
      for (const way of ['sudo apt-get install -y chromium', 'PLAYWRIGHT_DOWNLOAD_HOST=', '--executable-path', '--cdp-endpoint'])
        expect(result.stderr).toContain(way);
      expect(readdirSync(cache).filter((name) => name.startsWith('chromium'))).toEqual([]);
    } finally {
      host.close();
      rmSync(cache, { recursive: true, force: true });
    }
  }, 150_000);

  it('a browser that cannot start does not stop the server: session_start answers how to get one, and the server goes on', async () => {
    const server = await startStdioServer(['--executable-path', '/nonexistent/chrome']);
    try {
      const started = await server.call('session_start', {});
      expect(errorCode(started)).toBe('browser_unavailable');
      const text = (started.content as Array<{ text: string }>)[0]!.text;
      expect(text).toContain('/nonexistent/chrome (--executable-path)');
      expect(text).toContain(INSTALL_BROWSER_COMMAND);
      const list = await server.call('session_list', {});
      expect(list.isError).toBeFalsy();
      expect(list.structuredContent).toEqual({ sessions: [] });
    } finally {
      await server.close();
    }
  }, 180_000);

  it('hints name commands this package installs: npx playwright-core or our install-browser, not npx playwright', () => {
    const files = ['src', 'docs', 'python/browser_session_mcp'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(ts|md|py)$/.test(file))
        .map((file) => join(dir, file)),
    );
    const stale = files.filter((file) => /npx playwright (install|show-trace)/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(stale).toEqual([]);
  });
});
