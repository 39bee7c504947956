import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { Logger } from 'pino';
import { ServiceError } from './errors.js';

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
  'or connect to a running browser with --cdp-endpoint http://127.0.0.1:9222.',
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

export interface BrowserManagerOptions {
  executablePath?: string;
  cdpEndpoint?: string;
  headless: boolean;
  browserArgs: string[];
  /** Flags decided at launch time (the egress policy's). */
  extraArgs?: () => string[];
  env: Record<string, string | undefined>;
  logger: Logger;
}

/** One shared Chromium, launched on first use and relaunched on the next use after it dies. */
export class BrowserManager {
  private launching: Promise<Browser> | undefined;
  private readonly disconnectListeners = new Set<() => void>();
  private closed = false;

  constructor(private readonly options: BrowserManagerOptions) {}

  onDisconnect(listener: () => void): void {
    this.disconnectListeners.add(listener);
  }

  async get(): Promise<Browser> {
    if (this.closed) throw new ServiceError('browser_unavailable', 'The server is shutting down.');
    if (this.launching) {
      const browser = await this.launching.catch(() => undefined);
      if (browser?.isConnected()) return browser;
      this.launching = undefined;
    }
    this.launching = this.launch();
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const { logger } = this.options;
    let browser: Browser;
    if (this.options.cdpEndpoint) {
      logger.info({ endpoint: this.options.cdpEndpoint }, 'connecting to browser over CDP');
      try {
        browser = await chromium.connectOverCDP(this.options.cdpEndpoint, { timeout: 30_000 });
      } catch (err) {
        throw new ServiceError(
          'browser_unavailable',
          `Could not connect to the browser at ${this.options.cdpEndpoint}: ${firstLine(err)}`,
          { cause: err },
        );
      }
    } else {
      const found = findBrowserExecutable(this.options.executablePath, this.options.env);
      if (!found) throw new ServiceError('browser_unavailable', HOW_TO_GET_A_BROWSER);
      logger.info({ executablePath: found.path, source: found.source }, 'launching Chromium');
      try {
        browser = await chromium.launch({
          executablePath: found.path,
          headless: this.options.headless,
          args: [...DEFAULT_CHROMIUM_ARGS, ...(this.options.extraArgs?.() ?? []), ...this.options.browserArgs],
          // The server owns shutdown; Playwright must not race it on signals.
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
          timeout: 60_000,
        });
      } catch (err) {
        throw new ServiceError(
          'browser_unavailable',
          `Could not launch Chromium at ${found.path}: ${firstLine(err)}\n${HOW_TO_GET_A_BROWSER}`,
          { cause: err },
        );
      }
    }
    browser.on('disconnected', () => {
      if (!this.closed) logger.warn('browser disconnected; the next session_start relaunches it');
      for (const listener of this.disconnectListeners) listener();
    });
    return browser;
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = await this.launching?.catch(() => undefined);
    this.launching = undefined;
    if (browser?.isConnected()) await browser.close().catch(() => undefined);
  }
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}
