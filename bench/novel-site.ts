/**
 * Serves test/sites/novel (apps no model has seen, for real-model runs), or another folder of test/sites with `--dir`
 * (`challenges`), on loopback and judges them without the
 * model's help: each page gets a script that reports its `window.__novel` to this server whenever it changes, and
 * the latest report per app is kept in a JSON file. The model never sees the file or the reports.
 *
 *   npx tsx bench/novel-site.ts --port 8765 --results /tmp/novel-results.json [--dir challenges]
 */
import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8765' },
    results: { type: 'string', default: '/tmp/novel-results.json' },
    dir: { type: 'string', default: 'novel' },
  },
});
if (!/^[a-z0-9-]+$/.test(values.dir!)) throw new Error('--dir is a folder name of test/sites, e.g. novel or challenges');
const NOVEL_DIR = fileURLToPath(new URL(`../test/sites/${values.dir}/`, import.meta.url));
const PREFIX = new RegExp(`^/${values.dir}/`);
const results: Record<string, { done: boolean; detail: string; at: string }> = {};

/** Reports each `window.__novel` the app sets to the judge (a beacon: no timer, nothing the page waits on). */
const REPORTER = `<script>(() => {
  let value;
  Object.defineProperty(window, '__novel', {
    configurable: true,
    get: () => value,
    set: (next) => {
      value = next;
      navigator.sendBeacon('/__judge?app=' + encodeURIComponent(location.pathname), JSON.stringify(next ?? null));
    },
  });
})();</script>`;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/__judge') {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const reported = JSON.parse(body || 'null') as { done?: boolean; detail?: string } | null;
      results[url.searchParams.get('app') ?? '?'] = {
        done: reported?.done === true,
        detail: reported?.detail ?? '',
        at: new Date().toISOString(),
      };
      writeFileSync(values.results!, `${JSON.stringify(results, null, 2)}\n`);
      res.writeHead(204).end();
    });
    return;
  }
  const file = join(NOVEL_DIR, normalize(url.pathname.replace(PREFIX, '/')).replace(/^[/\\]+/, ''));
  if (!file.startsWith(NOVEL_DIR) || !file.endsWith('.html') || !existsSync(file)) return void res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  if (url.searchParams.has('raw')) return void createReadStream(file).pipe(res);
  res.end(readFileSync(file, 'utf8').replace(/<head>/i, `<head>${REPORTER}`));
});
server.listen(Number(values.port), '127.0.0.1', () => console.log(`apps on http://127.0.0.1:${values.port}/${values.dir}/<app>.html`));
