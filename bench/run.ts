/**
 * `npm run bench [name ...]`: runs every bench/<name>.bench.ts (or the named ones) one after another.
 * Each exports `run(): Promise<void>` that prints its tables with printTable.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.includes(file.replace(/\.bench\.ts$/, '')))
  .sort();

console.log(`# browser-session-mcp benchmarks (${new Date().toISOString()}, node ${process.version}, ${files.length} suites)`);
for (const file of files) {
  const started = Date.now();
  const mod = (await import(pathToFileURL(`${dir}/${file}`).href)) as { run: () => Promise<void> };
  await mod.run();
  console.log(`\n(${file}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
process.exit(0);
