import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

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

/**
 * Where a browser was found, in the order they are tried: the `--executable-path` option, `BROWSER_EXECUTABLE_PATH`,
 * Playwright's browser cache, Chrome, Chromium or Edge installed at their usual paths, Debian/Ubuntu's packages, PATH.
 */
export type BrowserSource = 'option' | 'env' | 'playwright' | 'installed' | 'package' | 'path';

export interface BrowserDiscovery {
  path: string;
  source: BrowserSource;
}

/** What discovery reads of the machine; the real one by default, another in tests of other platforms. */
export interface Machine {
  platform: NodeJS.Platform;
  home: string;
  env: Record<string, string | undefined>;
  exists(path: string): boolean;
  /** Entries of a folder; [] when it cannot be read. */
  list(dir: string): string[];
}

export function thisMachine(env: Record<string, string | undefined> = process.env): Machine {
  return {
    platform: process.platform,
    home: homedir(),
    env,
    exists: existsSync,
    list: (dir) => {
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
  };
}

/**
 * Finds a Chromium in this order (docs/install.md): the explicit option, BROWSER_EXECUTABLE_PATH; Playwright's browser
 * cache; Google Chrome, Chromium or Microsoft Edge at their usual install paths; Debian/Ubuntu's chromium packages; a
 * chromium or chrome on PATH. Within a place, a headless browser prefers Chromium's headless shell (about half the CPU
 * of the full browser per launch and per context on a 2-core machine); a headed one never takes it.
 */
export function findBrowserExecutable(
  explicit: string | undefined,
  env: Record<string, string | undefined> = process.env,
  headless = true,
  machine: Machine = thisMachine(env),
): BrowserDiscovery | undefined {
  if (explicit) return { path: explicit, source: 'option' };
  if (env.BROWSER_EXECUTABLE_PATH) return { path: env.BROWSER_EXECUTABLE_PATH, source: 'env' };
  for (const candidate of candidates(machine, headless)) if (machine.exists(candidate.path)) return candidate;
  return undefined;
}

function* candidates(machine: Machine, headless: boolean): Generator<BrowserDiscovery> {
  const path = machine.platform === 'win32' ? win32 : posix;
  const root = playwrightCache(machine);
  if (headless) yield* playwrightBuilds(machine, root, HEADLESS_SHELL_BUILD);
  yield* playwrightBuilds(machine, root, CHROMIUM_BUILD);
  for (const candidate of installedBrowsers(machine)) yield { path: candidate, source: 'installed' };
  if (machine.platform === 'linux') {
    for (const candidate of [...(headless ? DEBIAN_HEADLESS_SHELLS : []), ...DEBIAN_BROWSERS]) yield { path: candidate, source: 'package' };
  }
  const names = machine.platform === 'win32' ? PATH_NAMES.map((name) => `${name}.exe`) : PATH_NAMES;
  const separator = machine.platform === 'win32' ? ';' : ':';
  for (const dir of (machine.env.PATH ?? machine.env.Path ?? '').split(separator).filter(Boolean)) {
    for (const name of names) yield { path: path.join(dir, name), source: 'path' };
  }
}

/** Playwright's browser cache: PLAYWRIGHT_BROWSERS_PATH, else its per-platform default (what `playwright install` fills). */
export function playwrightCache(machine: Machine): string {
  const { env, home, platform } = machine;
  if (env.PLAYWRIGHT_BROWSERS_PATH && env.PLAYWRIGHT_BROWSERS_PATH !== '0') return env.PLAYWRIGHT_BROWSERS_PATH;
  if (platform === 'win32') return win32.join(env.LOCALAPPDATA ?? win32.join(home, 'AppData', 'Local'), 'ms-playwright');
  if (platform === 'darwin') return posix.join(home, 'Library', 'Caches', 'ms-playwright');
  return posix.join(env.XDG_CACHE_HOME || posix.join(home, '.cache'), 'ms-playwright');
}

interface PlaywrightBuild {
  prefix: string;
  /** The executable inside a build's folder, by platform, for the layouts Playwright has used. */
  binaries: Partial<Record<NodeJS.Platform, string[]>>;
}

const HEADLESS_SHELL_BUILD: PlaywrightBuild = {
  prefix: 'chromium_headless_shell-',
  binaries: {
    linux: ['chrome-headless-shell-linux64/chrome-headless-shell', 'chrome-linux/headless_shell'],
    darwin: [
      'chrome-headless-shell-mac-arm64/chrome-headless-shell',
      'chrome-headless-shell-mac-x64/chrome-headless-shell',
      'chrome-mac/headless_shell',
    ],
    win32: ['chrome-headless-shell-win64/chrome-headless-shell.exe', 'chrome-win/headless_shell.exe'],
  },
};

const CHROMIUM_BUILD: PlaywrightBuild = {
  prefix: 'chromium-',
  binaries: {
    linux: ['chrome-linux64/chrome', 'chrome-linux/chrome'],
    darwin: [
      'chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing',
      'chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing',
      'chrome-mac/Chromium.app/Contents/MacOS/Chromium',
    ],
    win32: ['chrome-win64/chrome.exe', 'chrome-win/chrome.exe'],
  },
};

/** The builds of one kind in Playwright's cache, newest revision first. */
function* playwrightBuilds(machine: Machine, root: string, build: PlaywrightBuild): Generator<BrowserDiscovery> {
  const path = machine.platform === 'win32' ? win32 : posix;
  const revisions = machine
    .list(root)
    .filter((name) => name.startsWith(build.prefix) && /^\d+$/.test(name.slice(build.prefix.length)))
    .sort((a, b) => Number(b.slice(build.prefix.length)) - Number(a.slice(build.prefix.length)));
  for (const revision of revisions) {
    for (const rel of build.binaries[machine.platform] ?? [])
      yield { path: path.join(root, revision, ...rel.split('/')), source: 'playwright' };
  }
}

/** Google Chrome, Chromium and Microsoft Edge where their own installers put them. */
function installedBrowsers({ platform, env, home }: Machine): string[] {
  if (platform === 'darwin') {
    const apps = [
      'Google Chrome.app/Contents/MacOS/Google Chrome',
      'Chromium.app/Contents/MacOS/Chromium',
      'Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    ];
    return ['/Applications', posix.join(home, 'Applications')].flatMap((dir) => apps.map((app) => posix.join(dir, app)));
  }
  if (platform === 'win32') {
    const bases = [env.LOCALAPPDATA, env.PROGRAMFILES ?? 'C:\\Program Files', env['PROGRAMFILES(X86)'] ?? 'C:\\Program Files (x86)'];
    const apps = [
      'Google\\Chrome\\Application\\chrome.exe',
      'Chromium\\Application\\chrome.exe',
      'Microsoft\\Edge\\Application\\msedge.exe',
    ];
    return bases.filter((base): base is string => !!base).flatMap((base) => apps.map((app) => win32.join(base, app)));
  }
  return [
    '/opt/google/chrome/chrome',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/google-chrome',
    '/opt/chromium.org/chromium/chromium',
    '/opt/microsoft/msedge/msedge',
    '/usr/bin/microsoft-edge-stable',
    '/usr/bin/microsoft-edge',
  ];
}

/**
 * Debian's chromium-headless-shell (the binary, not its /usr/bin wrapper, which would sit between the server and the
 * browser process), then Debian's and Ubuntu's chromium.
 */
const DEBIAN_HEADLESS_SHELLS = ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell'];
const DEBIAN_BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium'];

const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome', 'msedge', 'microsoft-edge'];

/** The one command that gets this version's own browser: Playwright's Chromium build, for the playwright-core we run. */
export const INSTALL_BROWSER_COMMAND = 'npx -y browser-session-mcp install-browser';

/** How a browser was found, in words, for messages: `/usr/bin/chromium (Debian/Ubuntu package)`. */
export function describeSource(source: BrowserSource): string {
  return {
    option: '--executable-path',
    env: 'BROWSER_EXECUTABLE_PATH',
    playwright: "Playwright's browser cache",
    installed: 'installed browser',
    package: 'Debian/Ubuntu package',
    path: 'found on PATH',
  }[source];
}

/** Why there is no browser: where discovery looked, then how to get one. */
export function noBrowserFound(machine: Machine = thisMachine()): string {
  return [
    "No Chromium, Chrome or Edge was found. Looked for --executable-path and BROWSER_EXECUTABLE_PATH, Playwright's",
    `browsers in ${playwrightCache(machine)}, Chrome, Chromium and Edge at their usual paths${machine.platform === 'linux' ? ", Debian/Ubuntu's chromium packages" : ''} and PATH.`,
    howToGetABrowser(machine),
  ].join('\n');
}

/** Exact commands that get a browser on this platform, and the other ways to give the server one. */
export function howToGetABrowser(machine: Machine = thisMachine()): string {
  const system =
    machine.platform === 'linux'
      ? ['  Debian:         sudo apt-get install -y chromium chromium-headless-shell', '  Ubuntu:         sudo snap install chromium']
      : machine.platform === 'darwin'
        ? ['  Google Chrome:  brew install --cask google-chrome']
        : ['  Google Chrome:  winget install Google.Chrome'];
  return [
    'Get one with any of:',
    `  ${INSTALL_BROWSER_COMMAND}   (Playwright's Chromium for this version; from a clone: node dist/cli.js install-browser)`,
    ...system,
    '  or Google Chrome from https://www.google.com/chrome/',
    'then start the session again (no restart needed). Or give a browser with --executable-path /path/to/chrome (or',
    'BROWSER_EXECUTABLE_PATH), or use browsers elsewhere with --cdp-endpoint http://127.0.0.1:9222 or',
    '--playwright-endpoint ws://host:3000/ (docs/hosts.md).',
  ].join('\n');
}
