import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const DOORS = ['mcp', 'http', 'client'];

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

  it('the core never imports a door (mcp, http, client)', () => {
    const violations = [...graph]
      .filter(([file]) => file.startsWith('core/'))
      .flatMap(([file, targets]) =>
        targets.filter((target) => DOORS.some((door) => target.startsWith(`${door}/`))).map((t) => `${file} -> ${t}`),
      );
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('a door never imports another door, except the /mcp endpoint hosting the MCP server', () => {
    // The one allowed edge: streamable HTTP at /mcp (http/mcp.ts) runs the MCP door's server over the HTTP door.
    const allowed = new Set(['http/mcp.ts -> mcp/server.ts']);
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

  it('src has no import cycle, type-only imports included', () => {
    const cycle = findCycle(graph);
    expect(cycle, cycle && `import cycle: ${cycle.join(' -> ')}`).toBeUndefined();
  });
});
