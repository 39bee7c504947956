import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './fixtures/mcp-stdio.js';
import { startHttp, type TestHttp } from './http-fixture.js';

const CLI = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const EXPECTED_FAILURES = join(ROOT, 'test/conformance/expected-failures.yml');

/** Scenarios that apply to any MCP server; each must pass with no failure or warning. */
const REQUIRED = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'logging-set-level',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

describe('MCP conformance suite against /mcp', () => {
  let server: TestHttp;
  let outDir: string;
  let run: { code: number; stdout: string; stderr: string };
  const results = new Map<string, Check[]>();

  beforeAll(async () => {
    server = await startHttp();
    outDir = mkdtempSync(join(tmpdir(), 'conformance-'));
    run = await new Promise((resolve) => {
      execFile(
        process.execPath,
        [
          '--import',
          join(ROOT, 'test/conformance/node20-fs.mjs'),
          CLI,
          'server',
          '--url',
          `${server.url}/mcp`,
          '--suite',
          'all',
          '--expected-failures',
          EXPECTED_FAILURES,
          '-o',
          outDir,
        ],
        { cwd: ROOT, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
    });
    for (const dir of readdirSync(outDir)) {
      const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(dir)?.[1];
      if (scenario) results.set(scenario, JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as Check[]);
    }
  }, 150_000);
  afterAll(async () => {
    await server?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('passes, with only the listed fixture-only scenarios failing', () => {
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`).toBe(0);
    expect(run.stdout).toContain('all failures are expected');
  });

  it.each(REQUIRED)('scenario %s passes every check', (scenario) => {
    const checks = results.get(scenario);
    expect(checks, `no results for ${scenario}`).toBeDefined();
    const bad = checks!.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    expect(bad, JSON.stringify(bad)).toEqual([]);
  });
});
