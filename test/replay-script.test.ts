import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import { DEFAULT_CHROMIUM_ARGS, findBrowserExecutable } from '../src/core/browser.js';
import type { RunStep } from '../src/core/recording/index.js';
import { pythonString } from '../src/core/replay/script-code.js';
import { renderScript } from '../src/core/replay/script.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { findAction } from './fixtures/refs.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const PASSWORD = 'correct horse battery';
/** Forms the password could take in a script: as typed, in a URL, in a form body. */
const PASSWORD_FORMS = [PASSWORD, encodeURIComponent(PASSWORD), PASSWORD.replaceAll(' ', '+')];
/** Longest the script may take in a fresh Chromium: a sign-in and six actions on a loopback site. */
const SCRIPT_TIMEOUT_MS = 60_000;

const fixture = useLibrarySite();

/** The account page's server state for `user`, read from outside any browser. */
async function stateOf(user: string): Promise<unknown> {
  return (await fetch(fixture.site.url(`/replay/state?user=${encodeURIComponent(user)}`))).json();
}

/** What a person does on the replay site: sign in (the password a %password% variable), change the settings, save, add a note. */
async function changeAccount(session: BrowserSession, user: string): Promise<void> {
  await session.navigate(fixture.site.url('/replay/login.html'));
  const login = (await session.page.observe()).actions;
  await session.page.act({ ...findAction(login, /textbox: Username/), arguments: { value: user } });
  await session.page.act({
    action: { ...findAction(login, /textbox: Password/), arguments: { value: '%password%' } },
    variables: { password: PASSWORD },
  });
  await session.page.act(findAction(login, /button: Sign in/));
  const account = (await session.page.observe()).actions;
  await session.page.act({ ...findAction(account, /textbox: Display name/), arguments: { value: 'Alice "Al" Liddell' } });
  await session.page.act({ ...findAction(account, /combobox: Plan/), arguments: { values: ['Pro'] } });
  await session.page.act({ ...findAction(account, /checkbox: Email me updates/), method: 'check' });
  await session.page.act(findAction(account, /button: Save/));
  const saved = (await session.page.observe()).actions;
  await session.page.act({ ...findAction(saved, /textbox: New note/), arguments: { value: 'Buy milk\\n & eggs' } });
  await session.page.act(findAction(saved, /button: Add note/));
}

/** The typescript script as this machine can run it: playwright-core from this checkout, and the Chromium the tests use. */
function runnable(script: string): string {
  const core = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('playwright-core/package.json')), 'index.mjs')).href;
  const launch = { executablePath: findBrowserExecutable(undefined)?.path ?? '/usr/bin/chromium', args: DEFAULT_CHROMIUM_ARGS };
  const imported = script.replace("import { chromium } from 'playwright';", `import { chromium } from ${JSON.stringify(core)};`);
  const launched = imported.replace('chromium.launch()', `chromium.launch(${JSON.stringify(launch)})`);
  expect(launched, 'the script imports playwright and launches chromium once, as written').not.toBe(imported);
  expect(imported).not.toBe(script);
  return launched;
}

// One session in Chromium and one script run in another: a loaded machine needs more than the default minute.
describe('session_script', { timeout: 150_000 }, () => {
  it('writes a session as a typescript script that, run in a fresh browser, leaves the server as the session did; no secret in any format', async () => {
    const user = `alice-${randomUUID().slice(0, 8)}`;
    const session = await fixture.lib.startSession();
    const dir = await mkdtemp(join(tmpdir(), 'replay-script-'));
    try {
      await changeAccount(session, user);
      const after = await stateOf(user);
      expect(after).toEqual({ name: 'Alice "Al" Liddell', plan: 'pro', updates: true, notes: ['Buy milk\\n & eggs'], layout: 1 });

      const { script, steps } = await session.script({ format: 'typescript' });
      expect(steps).toBe(10);
      for (const form of PASSWORD_FORMS) expect(script).not.toContain(form);
      expect(script).toContain('const NEEDED = ["PASSWORD"];');
      expect(script).toContain('.fill(env.PASSWORD)');
      expect(script).toContain("getByRole('button', { name: 'Save' })");
      expect(script).toContain('getByLabel(\'Plan\').selectOption(["Pro"])');
      const file = join(dir, 'session.mts');
      await writeFile(file, runnable(script));

      // Without PASSWORD it stops before a browser starts, naming it.
      const env = { PATH: process.env.PATH, HOME: process.env.HOME };
      const refused = await run(process.execPath, ['--import', 'tsx', file], { cwd: REPO, env, timeout: SCRIPT_TIMEOUT_MS }).catch(
        (err: { code: number; stderr: string }) => err,
      );
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('Set PASSWORD in the environment first.') });

      await fetch(fixture.site.url(`/replay/reset?user=${encodeURIComponent(user)}`), { method: 'POST' });
      expect(await stateOf(user)).toMatchObject({ name: user, plan: 'free', updates: false, notes: [] });
      await run(process.execPath, ['--import', 'tsx', file], { cwd: REPO, env: { ...env, PASSWORD }, timeout: SCRIPT_TIMEOUT_MS });
      expect(await stateOf(user)).toEqual(after);

      const python = (await session.script({ format: 'python' })).script;
      for (const form of PASSWORD_FORMS) expect(python).not.toContain(form);
      expect(python).toContain('.fill(env["PASSWORD"])');
      await writeFile(join(dir, 'session.py'), python);
      await run('python3', ['-m', 'py_compile', join(dir, 'session.py')], { timeout: SCRIPT_TIMEOUT_MS });

      const test = (await session.script({ format: 'test' })).script;
      expect(test).toContain("import { test } from '@playwright/test';");
      expect(test).toContain(`test(${JSON.stringify(session.id)}, async ({ page }) => {`);
      for (const form of PASSWORD_FORMS) expect(test).not.toContain(form);

      const json = JSON.parse((await session.script({ format: 'json' })).script) as { steps: Array<{ method: string }> };
      expect(json.steps.map((step) => step.method)).toEqual([
        ...['goto', 'fill', 'fill', 'click'],
        ...['fill', 'selectOption', 'check', 'click', 'fill', 'click'],
      ]);
    } finally {
      await session.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('renderScript', () => {
  const save: RunStep = { method: 'click', target: { selector: 'internal:role=button[name="Save"i]', description: 'button "Save"' } };

  it("writes each step's wait after it: a load, or network idle", () => {
    const steps: RunStep[] = [
      { ...save, waitFor: 'load', actionId: 'act-1' },
      { method: 'press', arguments: { key: 'Enter' }, waitFor: 'networkidle' },
    ];
    const script = renderScript({ steps, title: 't' }, 'typescript');
    expect(script).toContain(
      [
        '    // 1. click button "Save" (actionId act-1)',
        "    await page.getByRole('button', { name: 'Save' }).click();",
        '    await page.waitForLoadState();',
        '    // 2. press Enter',
        '    await page.keyboard.press("Enter");',
        '    await page.waitForLoadState("networkidle");',
      ].join('\n'),
    );
    expect(renderScript({ steps, title: 't' }, 'python')).toContain(
      ['        page.keyboard.press("Enter")', '        page.wait_for_load_state("networkidle")'].join('\n'),
    );
  });

  it('reads each placeholder from the environment, in URLs as is, encoded or as [password]; escapes in a URL stay text', () => {
    const steps: RunStep[] = [
      { method: 'goto', url: 'https://bank.example/a?t=%token%&e=%25token%25&p=%5Bpassword%5D&x=%E2%80%99&q=%20b%20' },
      { method: 'fill', target: { selector: '#id', description: 'textbox' }, arguments: { value: 'id-%user_id%' } },
    ];
    const script = renderScript({ steps, title: 't' }, 'typescript');
    expect(script).toContain('const NEEDED = ["TOKEN", "PASSWORD", "USER_ID"];');
    expect(script).toContain(
      'await page.goto("https://bank.example/a?t=" + env.TOKEN + "&e=" + encodeURIComponent(env.TOKEN) + "&p=" + encodeURIComponent(env.PASSWORD) + "&x=%E2%80%99&q=%20b%20");',
    );
    expect(script).toContain('.fill("id-" + env.USER_ID);');
    expect(renderScript({ steps, title: 't' }, 'python')).toContain('"&e=" + quote(env["TOKEN"], safe="!\'()*")');
  });

  it('stops the script at a step it cannot do, saying why; tabs the session opened are mapped in order, a guess said', () => {
    const steps: RunStep[] = [
      { method: 'newTab', arguments: { url: 'https://example.com/' } },
      { method: 'selectTab', arguments: { tabId: 't0' } },
      { method: 'selectTab', arguments: { tabId: 't3' } },
      { method: 'click' },
    ];
    const script = renderScript({ steps, title: 't' }, 'typescript');
    expect(script).toContain('tabs["t1"] = page;');
    expect(script).toContain('    page = tabs["t0"];\n    await page.bringToFront();');
    expect(script).toContain('// Guessed: no step opened tab t3 (a popup?); taken to be the newest page.');
    expect(script).toContain(
      'throw new Error("Step 4 (click) cannot be done by this script: neither its element nor a point was recorded.");',
    );
  });

  it('writes any string as a Python literal: quotes, backslashes, line breaks, control characters, lone surrogates', async () => {
    const nasty = 'a"b\'c\\d\ne\rf\tg\u0000h\u0085i\u2028j\ud800k\udc00l😀m\u00e9';
    const { stdout } = await run('python3', ['-c', `import json; print(json.dumps(${pythonString(nasty)}))`]);
    expect(JSON.parse(stdout)).toBe(nasty);
  });
});
