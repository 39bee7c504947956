import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const DOORS = ['mcp', 'http', 'client', 'live'];

/**
 * What each folder may import (besides itself), from the floor up; the root files of src/ and src/core/ (errors.ts,
 * service.ts, ...) are units of their own. docs/operations.md "Floors" says why each sits where it does. A folder
 * missing here, or an import not listed, fails the test: adding one is a decision, made here.
 */
const MAY_IMPORT: Record<string, string[]> = {
  // The floor: what every layer shares about one page.
  'core/page': ['core/errors.ts', 'core/time.ts'],
  'core/storage': ['core/errors.ts', 'core/validation.ts'],
  'core/recording': ['core/errors.ts', 'core/page', 'core/variables.ts'],
  'core/egress': ['core/errors.ts', 'core/page'],
  'core/hosts': ['core/browser.ts', 'core/errors.ts'],
  'core/llm': ['core/egress', 'core/errors.ts', 'core/usage.ts', 'core/validation.ts'],
  // Sessions, and what lives on them.
  'core/session': ['core/egress', 'core/errors.ts', 'core/hosts', 'core/page', 'core/recording', 'core/storage', 'core/time.ts'],
  'core/profiles': ['core/errors.ts', 'core/page', 'core/session', 'core/storage', 'core/validation.ts'],
  'core/live': ['core/errors.ts', 'core/operation.ts', 'core/session', 'core/sessions.ts', 'core/time.ts'],
  // Reading and acting on pages.
  'core/settle': ['core/errors.ts', 'core/page', 'core/sessions.ts', 'core/time.ts'],
  'core/snapshot': [
    'core/config.ts',
    'core/errors.ts',
    'core/operation.ts',
    'core/page',
    'core/sessions.ts',
    'core/settle',
    'core/time.ts',
  ],
  'core/act': [
    ...['core/config.ts', 'core/errors.ts', 'core/llm', 'core/location.ts', 'core/navigate.ts', 'core/operation.ts', 'core/page'],
    'core/recording',
    ...['core/sessions.ts', 'core/settle', 'core/snapshot', 'core/time.ts', 'core/tokens.ts', 'core/usage.ts', 'core/variables.ts'],
    // act checks each of several actions itself (act's schema lists them loosely, to keep tools/list short).
    'core/validation.ts',
  ],
  'core/agent': [
    ...['core/act', 'core/config.ts', 'core/egress', 'core/errors.ts', 'core/extract.ts', 'core/live', 'core/llm', 'core/navigate.ts'],
    ...['core/operation.ts', 'core/sessions.ts', 'core/snapshot', 'core/time.ts', 'core/usage.ts', 'core/validation.ts'],
    ...['core/variables.ts', 'version.ts'],
  ],
  // Runs done again: a session as code, replay, cached agent runs (docs/replay.md).
  'core/replay': [
    ...['core/act', 'core/agent', 'core/config.ts', 'core/errors.ts', 'core/llm', 'core/navigate.ts', 'core/operation.ts'],
    ...['core/page', 'core/recording', 'core/service.ts', 'core/sessions.ts', 'core/settle', 'core/snapshot', 'core/time.ts'],
    ...['core/usage.ts', 'core/validation.ts', 'core/variables.ts'],
  ],
  // The table of operations, above the core it runs.
  'core/operations': [
    ...['core/act', 'core/agent', 'core/errors.ts', 'core/extract-parts.ts', 'core/extract-schema.ts', 'core/extract.ts'],
    ...['core/live', 'core/location.ts', 'core/navigate.ts', 'core/operation.ts', 'core/outcome.ts', 'core/profiles'],
    ...['core/recording', 'core/replay', 'core/service.ts', 'core/sessions.ts', 'core/snapshot', 'core/usage.ts'],
  ],
  // The doors: each reads the table; none reaches into another (but /mcp, which hosts the MCP server over HTTP).
  live: ['core/errors.ts', 'core/live', 'core/service.ts'],
  mcp: [
    ...['core/act', 'core/errors.ts', 'core/live', 'core/llm', 'core/operation.ts', 'core/operations', 'core/outcome.ts'],
    ...['core/service.ts', 'core/usage.ts', 'core/validation.ts', 'door.ts', 'version.ts'],
  ],
  http: [
    ...['core/errors.ts', 'core/operation.ts', 'core/operations', 'core/outcome.ts', 'core/service.ts', 'core/sessions.ts'],
    ...['core/validation.ts', 'door.ts', 'live', 'mcp', 'version.ts'],
  ],
  client: [
    ...['core/act', 'core/agent', 'core/config.ts', 'core/errors.ts', 'core/extract-schema.ts', 'core/extract.ts', 'core/live'],
    ...['core/navigate.ts', 'core/operation.ts', 'core/operations', 'core/outcome.ts', 'core/profiles', 'core/service.ts'],
    ...['core/sessions.ts', 'core/usage.ts', 'core/validation.ts', 'door.ts', 'live'],
  ],
};

/** The unit a src-relative file belongs to: its folder (`core/snapshot`, `mcp`), or a root file of src/ or src/core/. */
function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'core') return parts.length === 2 ? file : `core/${parts[1]}`;
  return parts.length === 1 ? file : parts[0]!;
}

/** Imports between units, each with the file imports that make it (for the failure message). */
function unitGraph(graph: Map<string, string[]>): Map<string, Map<string, string[]>> {
  const units = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of graph) {
    const from = unitOf(file);
    const edges = units.get(from) ?? new Map<string, string[]>();
    units.set(from, edges);
    for (const target of targets) {
      const to = unitOf(target);
      if (to !== from) edges.set(to, [...(edges.get(to) ?? []), `${file} -> ${target}`]);
    }
  }
  return units;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports of each file under src (import, import type, export ... from, dynamic import), as src-relative .ts paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles
      .map((imported) => imported.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => relative(SRC, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))));
    graph.set(relative(SRC, file), [...new Set(targets)]);
  }
  return graph;
}

/** The first import cycle found by a depth-first walk, as the list of files around it, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (file: string): string[] | undefined => {
    if (onStack.has(file)) return [...stack.slice(stack.indexOf(file)), file];
    if (done.has(file)) return undefined;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    onStack.delete(file);
    done.add(file);
    return undefined;
  };
  for (const file of [...graph.keys()].sort()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('import boundaries', () => {
  const graph = importGraph();

  it('finds the source files and their imports', () => {
    expect(graph.get('core/service.ts')).toContain('core/sessions.ts');
  });

  it('the core never imports a door (mcp, http, client, live)', () => {
    const violations = [...graph]
      .filter(([file]) => file.startsWith('core/'))
      .flatMap(([file, targets]) =>
        targets.filter((target) => DOORS.some((door) => target.startsWith(`${door}/`))).map((t) => `${file} -> ${t}`),
      );
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('a door never imports another door, except those hosting one: /mcp over HTTP, and the live view page', () => {
    // Streamable HTTP at /mcp (http/mcp.ts) runs the MCP door's servers (both revisions) over the HTTP door; the HTTP server and the
    // library (on demand) serve the live view's page and socket (live/server.ts).
    const allowed = new Set([
      'http/mcp.ts -> mcp/server.ts',
      'http/mcp.ts -> mcp/modern.ts',
      'http/server.ts -> live/server.ts',
      'client/index.ts -> live/server.ts',
    ]);
    const doorOf = (file: string) => DOORS.find((door) => file.startsWith(`${door}/`));
    const violations = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => doorOf(file) && doorOf(target) && doorOf(file) !== doorOf(target))
        .map((target) => `${file} -> ${target}`)
        .filter((edge) => !allowed.has(edge)),
    );
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('the page text reader (core/snapshot/walker/) imports nothing outside its folder: it is bundled to run in the page', () => {
    const folder = join(SRC, 'core/snapshot/walker');
    const violations = sourceFiles(folder).flatMap((file) =>
      ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.map((imported) => imported.fileName)
        .filter((specifier) => !specifier.startsWith('.') || !resolve(dirname(file), specifier).startsWith(`${folder}/`))
        .map((specifier) => `${relative(SRC, file)} -> ${specifier}`),
    );
    expect(sourceFiles(folder).length).toBeGreaterThan(1);
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('no folder imports one that imports it back, directly or through others (root files count as units of their own)', () => {
    const units = unitGraph(graph);
    const asFiles = new Map([...units].map(([unit, edges]) => [unit, [...edges.keys()]]));
    const cycle = findCycle(asFiles);
    const through = cycle?.slice(1).map((unit, i) => `${cycle[i]} -> ${unit}: ${units.get(cycle[i]!)!.get(unit)![0]}`);
    expect(cycle, cycle && `folder cycle:\n${through!.join('\n')}`).toBeUndefined();
  });

  it('each folder imports only the folders and core files it is allowed to (MAY_IMPORT)', () => {
    const units = unitGraph(graph);
    const folders = [...units.keys()].filter((unit) => !unit.endsWith('.ts'));
    expect(
      folders.filter((folder) => !(folder in MAY_IMPORT)),
      'folders without a MAY_IMPORT entry',
    ).toEqual([]);
    const violations = folders.flatMap((folder) =>
      [...units.get(folder)!]
        .filter(([to]) => !MAY_IMPORT[folder]!.includes(to))
        .map(([to, imports]) => `${folder} may not import ${to}: ${imports.join(', ')}`),
    );
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('src has no import cycle, type-only imports included', () => {
    const cycle = findCycle(graph);
    expect(cycle, cycle && `import cycle: ${cycle.join(' -> ')}`).toBeUndefined();
  });
});
