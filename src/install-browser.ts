import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describeSource, findBrowserExecutable, playwrightCache, thisMachine } from './core/browser.js';

/**
 * `browser-session-mcp install-browser`: Playwright's own installer, from the playwright-core this server runs, so the
 * Chromium build (and its headless shell) is the one this version is tested with. Answers the exit code.
 */
export async function installBrowser(options: { withDeps: boolean }): Promise<number> {
  const cli = join(dirname(createRequire(import.meta.url).resolve('playwright-core/package.json')), 'cli.js');
  const args = [cli, 'install', ...(options.withDeps ? ['--with-deps'] : []), 'chromium'];
  const machine = thisMachine();
  process.stderr.write(`Installing Playwright's Chromium into ${playwrightCache(machine)} (playwright-core install chromium)\n`);
  // The installer's progress goes to stderr: stdout stays clean for scripts that read the result line.
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', process.stderr, process.stderr] });
    child.on('error', () => resolve(1));
    child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  });
  if (code !== 0) {
    process.stderr.write(`\nbrowser-session-mcp: Playwright's installer failed (exit ${code}; its message is above). ${OTHER_WAYS}\n`);
    return code || 1;
  }
  const found = findBrowserExecutable(undefined, process.env, true, machine);
  process.stdout.write(found ? `Headless sessions will use ${found.path} (${describeSource(found.source)}).\n` : 'Installed.\n');
  return 0;
}

const OTHER_WAYS = [
  "Where Playwright's download host cannot be reached, get a browser another way:",
  '  Debian:           sudo apt-get install -y chromium chromium-headless-shell',
  '  Ubuntu:           sudo snap install chromium',
  '  macOS:            brew install --cask google-chrome',
  '  Windows:          winget install Google.Chrome',
  '  a mirror:         PLAYWRIGHT_DOWNLOAD_HOST=https://your-mirror browser-session-mcp install-browser',
  '  a browser you have: --executable-path /path/to/chrome (or BROWSER_EXECUTABLE_PATH)',
  '  browsers elsewhere: --cdp-endpoint http://host:9222 or --playwright-endpoint ws://host:3000/ (docs/hosts.md)',
  'The server finds Chrome, Chromium or Edge at their usual paths by itself: `browser-session-mcp --check-browser` says which.',
].join('\n');
