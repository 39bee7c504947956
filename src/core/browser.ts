import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium } from 'playwright-core';

/**
 * Flags without which Chromium stalls on a closed network or in a container; and one for the page text: with the
 * renderer's accessibility tree kept in basic mode, CDP's Accessibility.getFullAXTree leaves out the InlineTextBox
 * nodes (a third of a text-heavy tree, never shown) and answers for a 5,000-element page in about 250 ms instead of
 * 330 (docs/pagetext.md, "What is met and what is not").
 */
export const DEFAULT_CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--force-renderer-accessibility=basic',
];

export const HOW_TO_GET_A_BROWSER = [
  'No Chromium or Chrome was found. Install one of:',
  '  Debian/Ubuntu:  sudo apt-get install -y chromium',
  '  any system:     npx playwright install chromium',
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

export interface BrowserDiscovery {
  path: string;
  source: 'option' | 'env' | 'playwright' | 'system';
}

/** Finds a Chromium in this order: explicit option, BROWSER_EXECUTABLE_PATH, Playwright's downloads, the system's. */
export function findBrowserExecutable(
  explicit: string | undefined,
  env: Record<string, string | undefined> = process.env,
): BrowserDiscovery | undefined {
  if (explicit) return { path: explicit, source: 'option' };
  const fromEnv = env.BROWSER_EXECUTABLE_PATH;
  if (fromEnv) return { path: fromEnv, source: 'env' };
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
  const root = env.PLAYWRIGHT_BROWSERS_PATH || join(homedir(), '.cache', 'ms-playwright');
  if (!existsSync(root)) return undefined;
  const builds = readdirSync(root)
    .filter((name) => name.startsWith('chromium-') || name.startsWith('chromium_headless_shell-'))
    .sort()
    .reverse();
  for (const build of builds) {
    for (const rel of [
      'chrome-linux/chrome',
      'chrome-linux64/chrome',
      'chrome-linux/headless_shell',
      'chrome-headless-shell-linux64/chrome-headless-shell',
    ]) {
      const candidate = join(root, build, rel);
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}
