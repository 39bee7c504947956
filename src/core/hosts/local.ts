import { chromium, type Browser } from 'playwright-core';
import type { Logger } from 'pino';
import { DEFAULT_CHROMIUM_ARGS, describeSource, findBrowserExecutable, howToGetABrowser, noBrowserFound, thisMachine } from '../browser.js';
import { ServiceError } from '../errors.js';
import { firstLine } from './host.js';

export interface LocalLaunchOptions {
  executablePath?: string;
  headless: boolean;
  browserArgs: string[];
  env: Record<string, string | undefined>;
  logger: Logger;
}

/** Launches the Chromium beside this process, with the flags it needs on a closed network. */
export async function launchLocal(options: LocalLaunchOptions): Promise<Browser> {
  const machine = thisMachine(options.env);
  const found = findBrowserExecutable(options.executablePath, options.env, options.headless, machine);
  if (!found) throw new ServiceError('browser_unavailable', noBrowserFound(machine));
  options.logger.info({ executablePath: found.path, source: found.source }, 'launching Chromium');
  try {
    return await chromium.launch({
      executablePath: found.path,
      headless: options.headless,
      args: [...DEFAULT_CHROMIUM_ARGS, ...options.browserArgs],
      // The server owns shutdown; Playwright must not race it on signals.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 60_000,
    });
  } catch (err) {
    throw new ServiceError(
      'browser_unavailable',
      `Could not launch the browser at ${found.path} (${describeSource(found.source)}): ${firstLine(err)}\n${howToGetABrowser(machine)}`,
      { cause: err },
    );
  }
}
