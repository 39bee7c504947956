/**
 * Writes the page text of every test page, novel app and corpus page to a folder, one file each, so two versions of
 * the reader can be compared byte for byte (`diff -r before after`): a refactor must change nothing, a format change
 * shows exactly where it lands.
 *
 *   npx tsx bench/dump-pagetext.ts OUT_DIR
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BrowserSessions } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { CORPUS_DIR, corpusHere, startCorpusServer } from './corpus.js';

const out = process.argv[2];
if (!out) throw new Error('usage: npx tsx bench/dump-pagetext.ts OUT_DIR');
mkdirSync(out, { recursive: true });

const site = await startSiteServer();
const corpus = await startCorpusServer();
const lib = new BrowserSessions({ logger: silentLogger(), env: {} });
try {
  const session = await lib.startSession();
  const sitesDir = new URL('../test/sites/', import.meta.url).pathname;
  const pages: Array<[string, string]> = [
    ...readdirSync(join(sitesDir, 'pages'))
      .filter((file) => file.endsWith('.html'))
      .map((file): [string, string] => [`pages-${file}`, site.url(`/pages/${file}`)]),
    ...readdirSync(join(sitesDir, 'novel'))
      .filter((file) => file.endsWith('.html'))
      .map((file): [string, string] => [`novel-${file}`, site.url(`/novel/${file}`)]),
    ['handles-index.html', site.url('/handles/index.html')],
    ...(corpusHere('dump-pagetext', 'writing the test pages only') ? readdirSync(CORPUS_DIR) : [])
      .filter((dir) => existsSync(join(CORPUS_DIR, dir, 'index.html')))
      .map((dir): [string, string] => [`corpus-${dir}`, `${corpus.origin}/${dir}/index.html`]),
  ];
  for (const [name, url] of pages) {
    try {
      await session.page.goto(url);
      writeFileSync(join(out, `${name}.txt`), (await session.page.extract()).pageText);
    } catch (err) {
      writeFileSync(join(out, `${name}.txt`), `FAILED: ${(err as Error).message}`);
    }
  }
  console.log(`${pages.length} page texts in ${out}`);
} finally {
  await lib.close();
  corpus.close();
  await site.close();
}
