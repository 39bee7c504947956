import { z } from 'zod';
import type { RunStep } from '../recording/index.js';
import { python, typescript } from './script-code.js';
import { StepWriter } from './script-steps.js';

/**
 * The forms a session's script is answered in (docs/replay.md): a script for `playwright`, a @playwright/test test,
 * playwright-python, or the run's steps as replay takes them. Said in the operation's description, not listed twice.
 */
export const ScriptFormat = z.enum(['typescript', 'test', 'python', 'json']);
export type ScriptFormat = z.infer<typeof ScriptFormat>;

/** What a script is made from: the run's steps (masked already) and a name for it. */
export interface ScriptRun {
  steps: RunStep[];
  /** Names the test, and the script's first comment. */
  title: string;
  /** The session's viewport: points and layouts are those of this size (Playwright's default is 1280 x 720). */
  viewport?: { width: number; height: number };
}

/** What the file around the steps needs to know. */
interface ScriptParts {
  title: string;
  viewport?: ScriptRun['viewport'];
  /** The steps' lines, not yet indented. */
  lines: string[];
  writer: StepWriter;
}

/** The run as code in `format`: a script that does the steps in a fresh browser, secrets read from the environment. */
export function renderScript(run: ScriptRun, format: ScriptFormat): string {
  if (format === 'json') return JSON.stringify({ steps: run.steps }, null, 2);
  const writer = new StepWriter(format === 'python' ? python : typescript, run.steps);
  const lines = run.steps.flatMap((step, i) => writer.lines(step, i + 1));
  const parts = { title: run.title, viewport: run.viewport, lines, writer };
  return format === 'python' ? pythonFile(parts) : format === 'test' ? testFile(parts) : typescriptFile(parts);
}

const SECRETS_SAID = "The session's secrets are not in this script: it reads them (and files to upload) from the environment.";

/** Lines at `depth` spaces; a line holding several (a page function) is indented whole. */
function indent(lines: string[], depth: number): string {
  return lines.flatMap((line) => line.split('\n').map((part) => (part ? `${' '.repeat(depth)}${part}` : part))).join('\n');
}

/** The environment read at the start of a TypeScript script; `missing` is what it does when variables are not set. */
function typescriptEnv(needed: string[], missing: string[]): string[] {
  if (!needed.length) return [];
  return [
    '',
    typescript.comment(SECRETS_SAID),
    `const NEEDED = ${typescript.literal(needed)};`,
    'const missing = NEEDED.filter((name) => process.env[name] === undefined);',
    'if (missing.length) {',
    ...missing.map((line) => `  ${line}`),
    '}',
    'const env = Object.fromEntries(NEEDED.map((name) => [name, process.env[name]!]));',
  ];
}

const MISSING_TEXT = "`Set ${missing.join(', ')} in the environment first.`";

/** `{ viewport: { width: 1280, height: 800 } }`, the context's options in TypeScript, or '' for Playwright's default. */
function contextOptions(viewport: ScriptRun['viewport']): string {
  return viewport ? `{ viewport: { width: ${viewport.width}, height: ${viewport.height} } }` : '';
}

function typescriptFile({ title, viewport, lines, writer }: ScriptParts): string {
  return [
    typescript.comment(`${title}: a browser-session-mcp session as a Playwright script. Run it: npx tsx session.mts`),
    "import { chromium } from 'playwright';",
    ...typescriptEnv(writer.needed, [`console.error(${MISSING_TEXT});`, 'process.exit(1);']),
    '',
    'async function main() {',
    '  const browser = await chromium.launch();',
    '  try {',
    `    const context = await browser.newContext(${contextOptions(viewport)});`,
    `    ${writer.usesTabs ? 'let' : 'const'} page = await context.newPage();`,
    ...(writer.usesTabs ? ['    const tabs: Record<string, typeof page> = { t0: page };'] : []),
    indent(lines, 4),
    '  } finally {',
    '    await browser.close();',
    '  }',
    '}',
    '',
    'main().catch((err) => {',
    '  console.error(err);',
    '  process.exitCode = 1;',
    '});',
    '',
  ].join('\n');
}

function testFile({ title, viewport, lines, writer }: ScriptParts): string {
  return [
    typescript.comment(`${title}: a browser-session-mcp session as a Playwright test. Run it: npx playwright test`),
    "import { test } from '@playwright/test';",
    ...typescriptEnv(writer.needed, [`throw new Error(${MISSING_TEXT});`]),
    '',
    ...(viewport ? [`test.use(${contextOptions(viewport)});`, ''] : []),
    `test(${typescript.literal(title)}, async ({ page${writer.usesTabs ? ', context' : ''} }) => {`,
    ...(writer.usesTabs ? ['  const tabs: Record<string, typeof page> = { t0: page };'] : []),
    indent(lines, 2),
    '});',
    '',
  ].join('\n');
}

function pythonFile({ title, viewport, lines, writer }: ScriptParts): string {
  const env = writer.needed.length
    ? [
        '',
        python.comment(SECRETS_SAID),
        `NEEDED = ${python.literal(writer.needed)}`,
        'missing = [name for name in NEEDED if name not in os.environ]',
        'if missing:',
        '    sys.exit("Set " + ", ".join(missing) + " in the environment first.")',
        'env = {name: os.environ[name] for name in NEEDED}',
      ]
    : [];
  return [
    python.comment(`${title}: a browser-session-mcp session as a Playwright script. Run it: python session.py`),
    ...(writer.needed.length ? ['import os', 'import sys'] : []),
    // A locator that filters by words (a row's text) is written with a regular expression.
    ...(lines.some((line) => line.includes('re.compile(')) ? ['import re'] : []),
    ...(writer.encodes ? ['from urllib.parse import quote'] : []),
    '',
    'from playwright.sync_api import sync_playwright',
    ...env,
    '',
    '',
    'def run(playwright):',
    '    browser = playwright.chromium.launch()',
    '    try:',
    `        context = browser.new_context(${viewport ? `viewport={"width": ${viewport.width}, "height": ${viewport.height}}` : ''})`,
    '        page = context.new_page()',
    ...(writer.usesTabs ? ['        tabs = {"t0": page}'] : []),
    indent(lines, 8),
    '    finally:',
    '        browser.close()',
    '',
    '',
    'if __name__ == "__main__":',
    '    with sync_playwright() as playwright:',
    '        run(playwright)',
    '',
  ].join('\n');
}
