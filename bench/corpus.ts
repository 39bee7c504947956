/**
 * The saved real pages (../shared/corpus) the page-text, act and options benchmarks read, served on loopback. They are
 * this workplace's own and not distributed (docs/benchmarks.md): without them those benches say so in one line.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Beside the repository, or beside a worktree's parent; PAGETEXT_CORPUS overrides. */
export const CORPUS_DIR =
  process.env.PAGETEXT_CORPUS ??
  ['../../shared/corpus', '../../../shared/corpus']
    .map((path) => fileURLToPath(new URL(path, import.meta.url)))
    .find((path) => existsSync(path)) ??
  fileURLToPath(new URL('../../shared/corpus', import.meta.url));

/** Whether the corpus is here; if not, one line saying so and what the bench does instead (`then`). */
export function corpusHere(bench: string, then: string): boolean {
  if (existsSync(CORPUS_DIR)) return true;
  const where = relative(process.cwd(), CORPUS_DIR) || CORPUS_DIR;
  console.log(`${bench}: the saved-page corpus is not here (${where}); see docs/benchmarks.md for where to get it; ${then}`);
  return false;
}

export function startCorpusServer(): Promise<{ origin: string; close: () => void }> {
  const server = createServer((req, res) => {
    const path = join(CORPUS_DIR, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!path.startsWith(CORPUS_DIR) || !existsSync(path) || statSync(path).isDirectory()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': path.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream' });
    createReadStream(path).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }),
    ),
  );
}
