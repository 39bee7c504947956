/**
 * Page text: tokens of our text next to innerText and Playwright's ariaSnapshot, word coverage, refs on
 * interactive elements, over the test pages and the saved real pages of ../shared/corpus (PAGETEXT_CORPUS overrides); then the
 * time to read a page of 5,000 elements.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import type { Session } from '../src/core/sessions.js';
import { resolveRef, takeSnapshot } from '../src/core/snapshot/index.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { CORPUS_DIR, corpusHere, startCorpusServer } from './corpus.js';
import { median, printTable } from './table.js';

const PAGES_DIR = fileURLToPath(new URL('../test/sites/pages/', import.meta.url));
/** Pages that are not content: fixtures for timeouts and frames' insides. */
const NOT_BENCHED = new Set(['loop.html', 'frame-child.html', 'big.html']);
const OWNER = 'bench';
/** A loaded machine can take longer than the 10 s default for one browser call on the biggest pages. */
const CALL_TIMEOUT_MS = 60_000;
/** PAGETEXT_PAGES=0 skips the per-page tables and times big.html alone. */
const PAGES = process.env.PAGETEXT_PAGES !== '0';
/** Reads of big.html by each reader (PAGETEXT_ROUNDS). */
const ROUNDS = Number(process.env.PAGETEXT_ROUNDS ?? 15);

/** Elements a user can act on without a ref (marked in measure()), through open shadow roots; closed roots are out of a page script's reach. */
const COUNT_UNREFERENCED = `(() => {
  const marked = window.__bsmBenchMarked ?? new Set();
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [contenteditable=""], [contenteditable=true], [role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=switch], [role=menuitem], [role=option], [role=combobox], [role=textbox], [role=slider]';
  let total = 0, missing = 0;
  const visit = (root) => {
    for (const el of root.querySelectorAll(selector + ', [tabindex]')) {
      // A tabindex makes an element focusable only when it is a valid number of 0 or more ("_tbidx_" does not).
      if (!el.matches(selector) && el.tabIndex < 0) continue;
      if (!el.checkVisibility({ visibilityProperty: true }) || el.closest('[aria-hidden=true], [inert]')) continue;
      total++;
      if (!marked.has(el)) missing++;
    }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) visit(el.shadowRoot);
  };
  visit(document);
  return { total, missing };
})()`;

interface Row {
  page: string;
  innerText: number;
  aria: number;
  ours: number;
  coverage: number | undefined;
  expectedCoverage: number | undefined;
  interactive: number;
  missingRefs: number;
  /** innerText plus two tokens for each of our refs: the least any text with every word and every ref can cost. */
  floor: number;
  /** A second read of the settled page (ms): ours, Playwright's default ariaSnapshot(), and ariaSnapshotJSON({mode: 'ai'}). */
  oursMs: number;
  ariaMs: number;
  aiMs: number;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** The three ways to read a page, timed back to back on the same settled page. */
function readers(session: Session): Array<() => Promise<unknown>> {
  const body = session.page.locator('body');
  return [
    () => takeSnapshot(session, { callTimeoutMs: CALL_TIMEOUT_MS }),
    () => body.ariaSnapshot({ timeout: 20_000 }),
    () => body.ariaSnapshotJSON({ mode: 'ai', timeout: 20_000 }),
  ];
}

function tokens(text: string): number {
  return encode(text).length;
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** Share of the words of `expected` (with repeats) found in `text`. */
function coverage(expected: string, text: string): number | undefined {
  const have = new Set(words(text));
  const want = words(expected);
  if (want.length === 0) return undefined;
  return want.filter((word) => have.has(word)).length / want.length;
}

async function measure(service: BrowserService, sessionId: string, label: string, url: string, expected?: string): Promise<Row> {
  return (
    await service.operate(OWNER, sessionId, async (session: Session) => {
      await session.page.goto(url, { waitUntil: 'load', timeout: 20_000 }).catch(() => undefined);
      const snapshot = await takeSnapshot(session, { domSettleTimeoutMs: 5_000, callTimeoutMs: CALL_TIMEOUT_MS });
      const innerText = await session.page.evaluate<string>('document.body ? document.body.innerText : ""');
      const aria = await session.page.locator('body').ariaSnapshot({ timeout: 20_000 });
      // Each ref's locator marks the element it finds: the main frame's ref table is in Playwright's utility world, out
      // of a page script's reach (a ref inside an iframe marks nothing: its frame's window has no set).
      await session.page.evaluate('window.__bsmBenchMarked = new Set()');
      for (const ref of snapshot.refs.keys()) {
        const locator = await resolveRef(session, ref).catch(() => undefined);
        await locator
          ?.evaluate((el) => (window as unknown as { __bsmBenchMarked: Set<Element> }).__bsmBenchMarked.add(el), undefined, {
            timeout: 2_000,
          })
          .catch(() => undefined);
      }
      const counted = await session.page.evaluate<{ total: number; missing: number }>(COUNT_UNREFERENCED);
      const [ours, ariaRead, ai] = readers(session);
      const oursMs = await timed(ours!);
      const ariaMs = await timed(ariaRead!);
      const aiMs = await timed(ai!);
      return {
        oursMs,
        ariaMs,
        aiMs,
        page: label,
        innerText: tokens(innerText),
        aria: tokens(aria),
        ours: tokens(snapshot.text),
        coverage: coverage(innerText, snapshot.text),
        expectedCoverage: expected === undefined ? undefined : coverage(expected, snapshot.text),
        interactive: counted.total,
        missingRefs: counted.missing,
        floor: tokens(innerText) + 2 * snapshot.refs.size,
      };
    })
  ).result;
}

const pct = (value: number | undefined) => (value === undefined ? '' : `${(value * 100).toFixed(1)}%`);
const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);

function printTables(rows: Row[]): void {
  printTable(
    'Page text: o200k tokens per page (ours vs innerText and Playwright ariaSnapshot), words kept, refs',
    [
      'page',
      'innerText',
      'ariaSnapshot',
      'ours',
      'ours/innerText',
      'ours/aria',
      'innerText words kept',
      'expected words kept',
      'interactive',
      'without ref',
      'ours ms',
      'aria ms',
      'ai ms',
    ],
    rows.map((row) => [
      row.page,
      row.innerText,
      row.aria,
      row.ours,
      ratio(row.ours, row.innerText),
      ratio(row.ours, row.aria),
      pct(row.coverage),
      pct(row.expectedCoverage),
      row.interactive,
      row.missingRefs,
      row.oursMs,
      row.ariaMs,
      row.aiMs,
    ]),
  );
  const summary = (label: string, subset: Row[]) => {
    const withExpected = subset.filter((row) => row.expectedCoverage !== undefined);
    return [
      `${label} (${subset.length} pages)`,
      // A page that shows nothing (corpus/seattletimes-1 keeps its body hidden until a blocked script runs) has no ratio.
      median(subset.filter((row) => row.innerText > 0).map((row) => ratio(row.ours, row.innerText))),
      median(subset.filter((row) => row.aria > 0).map((row) => ratio(row.ours, row.aria))),
      pct(median(subset.map((row) => row.coverage ?? 1))),
      withExpected.length ? pct(median(withExpected.map((row) => row.expectedCoverage!))) : '',
      withExpected.length ? pct(Math.min(...withExpected.map((row) => row.expectedCoverage!))) : '',
      subset.reduce((sum, row) => sum + row.missingRefs, 0),
      median(subset.filter((row) => row.aria > 0).map((row) => ratio(row.floor, row.aria))),
      median(subset.map((row) => row.oursMs)),
      median(subset.map((row) => row.ariaMs)),
      median(subset.map((row) => row.aiMs)),
      median(subset.map((row) => ratio(row.oursMs, row.ariaMs))).toFixed(2),
    ];
  };
  printTable(
    'Page text: medians against the targets (ours/innerText <= 1.4, ours/aria <= 0.45, all words, every interactive element has a ref)',
    [
      'pages',
      'median ours/innerText',
      'median ours/aria',
      'median innerText words kept',
      'median expected words kept',
      'min expected words kept',
      'interactive without ref',
      'median (innerText + 2 tokens/ref)/aria',
      'median ours ms',
      'median aria ms',
      'median ai-mode JSON ms',
      'median ours/aria time (target <= 1.0)',
    ],
    [
      summary(
        'test pages',
        rows.filter((row) => row.page.startsWith('test/')),
      ),
      summary(
        'corpus',
        rows.filter((row) => row.page.startsWith('corpus/')),
      ),
      summary('all', rows),
    ],
  );
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const corpus = await startCorpusServer();
  const service = new BrowserService({ logger: silentLogger() });
  try {
    const { id } = await service.startSession(OWNER);
    const rows: Row[] = [];
    const pages = (PAGES ? readdirSync(PAGES_DIR) : []).filter((file) => file.endsWith('.html') && !NOT_BENCHED.has(file)).sort();
    for (const file of pages) rows.push(await measure(service, id, `test/${file}`, site.url(`/pages/${file}`)));
    const corpusPages =
      PAGES && corpusHere('pagetext', 'measuring the test pages only')
        ? readdirSync(CORPUS_DIR)
            .filter((dir) => existsSync(join(CORPUS_DIR, dir, 'index.html')))
            .sort()
        : [];
    for (const dir of corpusPages) {
      const expectedFile = join(CORPUS_DIR, dir, 'expected-text.txt');
      const expected = existsSync(expectedFile) ? readFileSync(expectedFile, 'utf8') : undefined;
      rows.push(await measure(service, id, `corpus/${dir}`, `${corpus.origin}/${dir}/index.html`, expected));
    }

    if (PAGES) printTables(rows);

    const timings = await service.operate(OWNER, id, async (session: Session) => {
      await session.page.goto(site.url('/pages/big.html'), { waitUntil: 'load' });
      const elements = await session.page.evaluate<number>('document.querySelectorAll("body *").length');
      await takeSnapshot(session, { callTimeoutMs: CALL_TIMEOUT_MS });
      const runs: number[][] = [[], [], []];
      // Interleaved, so load from elsewhere on the machine hits the three alike.
      for (let i = 0; i < ROUNDS; i++) for (const [n, read] of readers(session).entries()) runs[n]!.push(await timed(read));
      return { elements, runs };
    });
    const { elements, runs } = timings.result;
    const names = ['ours (takeSnapshot)', 'Playwright ariaSnapshot()', "Playwright ariaSnapshotJSON({mode: 'ai'})"];
    printTable(
      `Page text: time to read a page of 5,000 elements (target: ours <= 1.0x ariaSnapshot(), stretch 250 ms; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})`,
      ['page', 'reader', 'elements', 'runs', 'median ms', 'min ms', 'max ms', 'x ariaSnapshot() median'],
      runs.map((times, n) => [
        'test/big.html',
        names[n]!,
        elements,
        times.length,
        median(times),
        Math.min(...times),
        Math.max(...times),
        (median(times) / median(runs[1]!)).toFixed(2),
      ]),
    );
  } finally {
    await service.close();
    await site.close();
    corpus.close();
  }
}
