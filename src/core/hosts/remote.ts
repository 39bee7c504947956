import { chromium, type Browser } from 'playwright-core';
import { DEFAULT_CHROMIUM_ARGS } from '../browser.js';
import { ServiceError } from '../errors.js';
import { firstLine } from './host.js';

/** Launch options a Playwright server applies to the browser it launches for a connection (x-playwright-launch-options). */
export type RemoteLaunchOptions = Record<string, unknown> & { args?: string[] };

const CONNECT_TIMEOUT_MS = 15_000;

/**
 * The name a host is shown by (SessionInfo.host, logs, errors): the endpoint without userinfo, query string or
 * fragment, where hosted providers put their tokens.
 */
export function publicEndpoint(endpoint: string): string {
  const url = new URL(endpoint);
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}

/** Checks an endpoint flag at start-up; the message names the flag. */
export function checkEndpoint(endpoint: string, flag: string, schemes: string[]): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ServiceError('invalid_argument', `${flag} ${endpoint}: not a URL.`);
  }
  if (!schemes.includes(url.protocol)) {
    throw new ServiceError('invalid_argument', `${flag} ${publicEndpoint(endpoint)}: expected a ${schemes.join(' or ')} URL.`);
  }
  return endpoint;
}

/**
 * The launch options sent to Playwright servers: headless and our Chromium flags (without them Chromium stalls on
 * a closed network), then the user's options; the user's args are appended to ours.
 */
export function remoteLaunchOptions(options: {
  headless: boolean;
  browserArgs: string[];
  user: RemoteLaunchOptions | undefined;
}): RemoteLaunchOptions {
  const { args: userArgs = [], ...rest } = options.user ?? {};
  return { headless: options.headless, ...rest, args: [...DEFAULT_CHROMIUM_ARGS, ...options.browserArgs, ...userArgs] };
}

/** One connection to a Playwright server (run-server, launchServer, the Playwright image): it launches one browser for it. */
export async function connectPlaywright(endpoint: string, launchOptions: RemoteLaunchOptions): Promise<Browser> {
  try {
    return await chromium.connect(endpoint, {
      headers: { 'x-playwright-launch-options': JSON.stringify(launchOptions) },
      timeout: CONNECT_TIMEOUT_MS,
    });
  } catch (err) {
    throw new ServiceError('browser_unavailable', redact(firstLine(err), endpoint), { cause: err });
  }
}

/**
 * The flags of `expected` the host's Chromium was not started with. A Playwright server drops clients' args and
 * executablePath unless it runs with --unsafe; Chromium without our flags can stall on a closed network.
 */
export async function missingFlags(browser: Browser, expected: string[]): Promise<string[]> {
  const given = await commandLine(browser);
  if (given === undefined) return expected;
  // Both sources join the flags with spaces; a flag may hold spaces itself (--host-resolver-rules=MAP *.local ...).
  const line = ` ${given.trim().replace(/\s+/g, ' ')} `;
  return expected.filter((flag) => !line.includes(` ${flag} `));
}

/**
 * The browser's command line: from CDP, which answers it only to a browser started with --enable-automation (one of
 * our flags), else from chrome://version (the full browser has that page, the headless shell does not); undefined
 * when neither answers, which means our flags did not arrive.
 */
async function commandLine(browser: Browser): Promise<string | undefined> {
  try {
    const cdp = await browser.newBrowserCDPSession();
    try {
      const { arguments: args } = await cdp.send('Browser.getBrowserCommandLine');
      return args.join(' ');
    } finally {
      await cdp.detach().catch(() => undefined);
    }
  } catch {
    // not started with --enable-automation
  }
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto('chrome://version', { timeout: 10_000 });
    return (await page.locator('#command_line').textContent({ timeout: 10_000 })) ?? '';
  } catch {
    return undefined;
  } finally {
    await context.close().catch(() => undefined);
  }
}

/** A connection to a running Chrome's DevTools endpoint; its launch flags are whatever it was started with. */
export async function connectCdp(endpoint: string): Promise<Browser> {
  try {
    return await chromium.connectOverCDP(endpoint, { timeout: CONNECT_TIMEOUT_MS });
  } catch (err) {
    throw new ServiceError('browser_unavailable', redact(firstLine(err), endpoint), { cause: err });
  }
}

/** Playwright's messages quote the endpoint they failed on; never let its credentials reach a caller. */
function redact(message: string, endpoint: string): string {
  const url = new URL(endpoint);
  const secrets = [
    endpoint,
    url.username,
    url.password,
    decodeURIComponent(url.password),
    ...url.searchParams.values(),
    url.search.slice(1),
  ];
  let safe = message.split(endpoint).join(publicEndpoint(endpoint));
  for (const secret of secrets.filter((value) => value.length >= 3)) safe = safe.split(secret).join('***');
  return safe;
}
