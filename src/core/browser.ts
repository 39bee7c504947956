import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium } from 'playwright-core';

/**
 * Flags without which Chromium stalls on a closed network or in a container; and one that keeps the renderer from
 * building an accessibility tree for the browser process: the page text reads the page with its own walk in the page
 * and needs none. Forcing it on (`--force-renderer-accessibility=basic`, our default before) left a 200,000-element
 * page's renderer busy sending its tree to the browser for tens of seconds after load, unable to answer even the
 * cheapest call (docs/pagetext.md, "Big pages and the other sessions").
 */
export const DEFAULT_CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-renderer-accessibility',
  // Lets CDP answer the browser's command line, which tells whether a remote host applied these flags (hosts/remote.ts).
  // Playwright already makes navigator.webdriver true; headless there is no automation infobar to show.
  '--enable-automation',
];

export const HOW_TO_GET_A_BROWSER = [
  'No Chromium or Chrome was found. Install one of:',
  '  Debian/Ubuntu:  sudo apt-get install -y chromium',
  '  any system:     npx playwright-core install chromium',
  'or point to an existing one with --executable-path /path/to/chrome (or BROWSER_EXECUTABLE_PATH),',
  'or use browsers elsewhere with --cdp-endpoint http://127.0.0.1:9222 or --playwright-endpoint ws://host:3000/ (docs/hosts.md).',
].join('\n');

const SYSTEM_BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
];

const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];

/**
 * Chromium's headless shell (Debian's chromium-headless-shell; the binary, not its /usr/bin wrapper, which would sit
 * between the server and the browser process). It is what Playwright itself runs headless: on this project's 2-core
 * machine a browser launch with four contexts took half the CPU of the full browser in headless mode (6.4+3.5 s
 * against 12.8+7.2 s user+system for five launches).
 */
const SYSTEM_HEADLESS_SHELLS = ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell'];

export interface BrowserDiscovery {
  path: string;
  source: 'option' | 'env' | 'playwright' | 'system';
}

/**
 * Finds a Chromium in this order: explicit option, BROWSER_EXECUTABLE_PATH; for a headless browser a headless shell
 * (Playwright's download, then the system's); then Playwright's Chromium download, the system's Chromium or Chrome.
 */
export function findBrowserExecutable(
  explicit: string | undefined,
  env: Record<string, string | undefined> = process.env,
  headless = true,
): BrowserDiscovery | undefined {
  if (explicit) return { path: explicit, source: 'option' };
  const fromEnv = env.BROWSER_EXECUTABLE_PATH;
  if (fromEnv) return { path: fromEnv, source: 'env' };
  if (headless) {
    const shell = findPlaywrightBuild(env, HEADLESS_SHELL_BUILDS);
    if (shell) return { path: shell, source: 'playwright' };
    for (const candidate of SYSTEM_HEADLESS_SHELLS) if (existsSync(candidate)) return { path: candidate, source: 'system' };
  }
  const playwright = findPlaywrightChromium(env);
  if (playwright) return { path: playwright, source: 'playwright' };
  for (const candidate of SYSTEM_BROWSERS) if (existsSync(candidate)) return { path: candidate, source: 'system' };
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of PATH_NAMES) {
      const candidate = join(dir, name);
      if (existsSync(candidate)) return { path: candidate, source: 'system' };
    }
  }
  return undefined;
}

function findPlaywrightChromium(env: Record<string, string | undefined>): string | undefined {
  try {
    const expected = chromium.executablePath();
    if (expected && existsSync(expected)) return expected;
  } catch {
    // playwright-core throws when it has no registry entry for this platform
  }
  return findPlaywrightBuild(env, CHROMIUM_BUILDS);
}

interface PlaywrightBuild {
  prefix: string;
  binaries: string[];
}

const CHROMIUM_BUILDS: PlaywrightBuild[] = [{ prefix: 'chromium-', binaries: ['chrome-linux/chrome', 'chrome-linux64/chrome'] }];
const HEADLESS_SHELL_BUILDS: PlaywrightBuild[] = [
  {
    prefix: 'chromium_headless_shell-',
    binaries: ['chrome-linux/headless_shell', 'chrome-headless-shell-linux64/chrome-headless-shell'],
  },
];

/** The newest of Playwright's downloaded builds of these kinds (~/.cache/ms-playwright or PLAYWRIGHT_BROWSERS_PATH). */
function findPlaywrightBuild(env: Record<string, string | undefined>, kinds: PlaywrightBuild[]): string | undefined {
  const root = env.PLAYWRIGHT_BROWSERS_PATH || join(homedir(), '.cache', 'ms-playwright');
  if (!existsSync(root)) return undefined;
  for (const kind of kinds) {
    const builds = readdirSync(root)
      .filter((name) => name.startsWith(kind.prefix))
      .sort()
      .reverse();
    for (const build of builds) {
      for (const rel of kind.binaries) {
        const candidate = join(root, build, rel);
        if (existsSync(candidate)) return candidate;
      }
    }
  }
  return undefined;
}
