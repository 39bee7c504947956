import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort } from './fixtures/browser-hosts.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { isAlive } from './fixtures/processes.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced block of `language` that follows `marker` in the README. */
function block(marker: string, language: string): string {
  const at = README.indexOf(marker);
  expect(at, marker).toBeGreaterThanOrEqual(0);
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(README.slice(at));
  expect(match, `${language} block after ${marker}`).not.toBeNull();
  return match![1]!;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number;
}

/** Runs a command to its end (or kills its process group after `timeoutMs`), with its output. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdin!.end(options.input ?? '');
    const timer = setTimeout(() => kill(child), options.timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, pid: child.pid! });
    });
  });
}

function kill(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** What the README tells a new user to run, run as they would: its shell, Python and client-config examples. */
describe('the README, tried as a new user would', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('the REST example runs under POSIX sh, needs nothing beyond loopback, and leaves no server running', async () => {
    const [server, page] = [await closedPort(), await closedPort()];
    // Only the ports change, so the example cannot collide with anything else listening here.
    const script = block('## REST API', 'sh').replaceAll('8931', String(server)).replaceAll('8000', String(page));
    const ran = await run('sh', ['-eu'], { cwd: ROOT, input: script, timeoutMs: 90_000 });
    expect(ran.code, ran.stderr).toBe(0);
    const answers = ran.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { success: boolean; data?: { result?: { pageText?: string; status?: number } } });
    expect(answers.map((answer) => answer.success)).toEqual([true, true, true]);
    expect(answers[0]!.data!.result!.status).toBe(200);
    expect(answers[1]!.data!.result!.pageText).toBe('# Hello\n[Next](1)');
    // The comment beside the extract call shows what it answers.
    expect(script).toContain(JSON.stringify(answers[1]!.data!.result!.pageText).slice(1, -1));
    // The script's last line stops the server (SIGTERM): it closes its port on the way out.
    const listening = () =>
      fetch(`http://127.0.0.1:${server}/healthz`).then(
        () => true,
        () => false,
      );
    await expect.poll(listening, { timeout: 20_000 }).toBe(false);
  }, 120_000);

  it('the Python example runs in a fresh virtualenv with the client alone (no pydantic), against a server and page like the REST example', async () => {
    const venv = mkdtempSync(join(tmpdir(), 'bsm-venv-'));
    dirs.push(venv);
    const created = await run('python3', ['-m', 'venv', venv], { cwd: ROOT, timeoutMs: 60_000 });
    expect(created.code, created.stderr).toBe(0);
    const installed = await run(join(venv, 'bin', 'pip'), ['install', '--no-index', '--disable-pip-version-check', '-q', './python'], {
      cwd: ROOT,
      timeoutMs: 60_000,
    });
    expect(installed.code, installed.stderr).toBe(0);

    const key = crypto.randomUUID();
    const [serverPort, pagePort] = [await closedPort(), await closedPort()];
    const page: Server = createServer((_req, res) => res.end('<title>Hi</title><h1>Hello</h1><a href=/next>Next</a>'));
    await new Promise<void>((resolve) => page.listen(pagePort, '127.0.0.1', resolve));
    const server = spawn(
      process.execPath,
      ['dist/cli.js', '--transport', 'http', '--port', String(serverPort), '--api-key', key, '--egress-allow', `127.0.0.1:${pagePort}`],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: 'ignore' },
    );
    try {
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${serverPort}/healthz`).then(
              (r) => r.ok,
              () => false,
            ),
          { timeout: 30_000 },
        )
        .toBe(true);
      const example = block('## Library and Python client', 'python')
        .replaceAll('8931', String(serverPort))
        .replaceAll('8000', String(pagePort));
      const ran = await run(join(venv, 'bin', 'python'), ['-c', example], {
        cwd: venv,
        env: { PATH: process.env.PATH, HOME: venv, SVC_API_KEY: key },
        timeoutMs: 60_000,
      });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toContain('# Hello\n[Next](1)');
      expect(ran.stdout).toMatch(/Clicked \[1\]/);
    } finally {
      server.kill('SIGTERM');
      page.close();
    }
  }, 180_000);

  it('the client configs parse, and the command they give from a clone writes nothing but JSON-RPC on stdout', async () => {
    const readmeConfig = JSON.parse(block('## Install', 'json')) as { mcpServers: Record<string, { command: string; args: string[] }> };
    expect(readmeConfig.mcpServers['browser-sessions']).toEqual({ command: 'npx', args: ['-y', 'browser-session-mcp@latest'] });
    const example = JSON.parse(readFileSync(join(ROOT, 'mcp.json.example'), 'utf8')) as {
      mcpServers: Record<string, { command?: string; args?: string[]; env?: Record<string, string> }>;
    };
    // No placeholder keys to paste: a pasted "sk-..." would stand in for a key.
    expect(Object.values(example.mcpServers).filter((server) => server.env)).toEqual([]);
    const fromClone = example.mcpServers['browser-sessions-from-a-clone']!;
    const args = fromClone.args!.map((arg) => arg.replace('/path/to/browser-session-mcp', ROOT.replace(/\/$/, '')));
    const requests = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'readme', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    const ran = await run(fromClone.command === 'node' ? process.execPath : fromClone.command!, args, {
      cwd: tmpdir(),
      // info-level logs on: they must go to stderr.
      env: { ...process.env, LOG_LEVEL: 'info' },
      input: requests.map((request) => JSON.stringify(request)).join('\n') + '\n',
      timeoutMs: 60_000,
    });
    expect(ran.code, ran.stderr).toBe(0);
    const lines = ran.stdout.split('\n').filter(Boolean);
    expect(lines.map((line) => (JSON.parse(line) as { jsonrpc: string; id?: number }).jsonrpc)).toEqual(['2.0', '2.0']);
    expect((JSON.parse(lines[1]!) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    expect(ran.stderr).not.toBe('');
    expect(isAlive(ran.pid)).toBe(false);
  }, 90_000);
});
