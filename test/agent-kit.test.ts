import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runKit, runTask, type KitRun } from '../bench/agent-kit/harness.js';
import { startModelServer, type ModelServer } from '../bench/agent-kit/model-server.js';
import { done, ref, turnReply, type Turn } from '../bench/agent-kit/scripted.js';
import { TASKS, type KitTask } from '../bench/agent-kit/tasks.js';
import { useModelSite } from './fixtures/model-site.js';

/** The evaluation kit (npm run bench agent-tasks) with scripted models on the fake server, and its relay mode. */

const task = (name: string): KitTask => TASKS.find((one) => one.name === name)!;

const fixture = useModelSite();
let models: ModelServer;

beforeAll(async () => {
  models = await startModelServer({ upstream: fixture.llm.openaiBaseURL });
});
afterAll(async () => {
  await models?.close();
});

const kit = (server: ModelServer, turns?: Turn[]): KitRun => ({
  lib: fixture.lib,
  site: fixture.site,
  models: server,
  model: 'gpt-kit',
  apiKey: 'kit-key',
  modelTimeoutMs: 20_000,
  prepare: (one) => fixture.llm.enqueue(...(turns ?? one.script!).map(turnReply)),
});

describe('agent-tasks harness, scripted model on the fake server', () => {
  it('reports a sign-in done by the model: success read from the page, steps, prompt tokens per step', async () => {
    const report = await runTask(kit(models), task('login'));
    expect(report).toMatchObject({ task: 'login', suite: 'sites', success: true, steps: 2, actions: 4, stopReason: 'done' });
    expect(report.message).toContain('4,217.93 EUR');
    // One count per model request, each with the system prompt, the tools and a page; the second carries the first turn too.
    expect(report.promptTokensPerStep).toHaveLength(2);
    expect(report.promptTokensPerStep[0]).toBeGreaterThan(500);
    expect(report.promptTokensPerStep[1]).toBeGreaterThan(report.promptTokensPerStep[0]!);
    expect(report.promptTokens).toBe(report.promptTokensPerStep[0]! + report.promptTokensPerStep[1]!);
    // A screenshot per step at detail "low": 85 tokens each by OpenAI's rule.
    expect(report.imageTokens).toBe(2 * 85);
    // The fake server reports 100 input tokens per request, whatever it was sent.
    expect(report.reportedInputTokens).toBe(200);
    // The password stayed a placeholder in every request.
    expect(JSON.stringify(models.requests)).not.toContain('correct horse battery');
  });

  it('reports a failure the model claimed as success: the check reads the page, not the answer', async () => {
    const wrongPassword: Turn[] = [
      (request) => [
        { method: 'fill', ref: ref(/Username/)(request), value: 'alice' },
        { method: 'fill', ref: ref(/Password/)(request), value: 'hunter2' },
        { method: 'click', ref: ref(/button: Sign in/)(request) },
      ],
      done(true, 'Signed in; the balance is 1,000,000 EUR.'),
    ];
    const report = await runTask(kit(models, wrongPassword), task('login'));
    expect(report).toMatchObject({ success: false, steps: 2, actions: 4, stopReason: 'done' });
    expect(report.message).toContain('1,000,000 EUR');
    expect(report.promptTokensPerStep).toHaveLength(2);
  });
});

describe('agent-tasks relay mode', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-kit-relay-'));
    return () => rmSync(dir, { recursive: true, force: true });
  });

  it('writes each request to a file and takes the answer file, simplified or a full completion', async () => {
    const relay = await startModelServer({ relay: { dir, timeoutMs: 15_000, pollMs: 25, log: () => undefined } });
    const turns = task('archive').script!;
    // The "person": answers request-N.json from its page, the first as a full Chat Completions body, the others simplified.
    let answered = 0;
    const person = setInterval(() => {
      const file = join(dir, `request-${answered + 1}.json`);
      if (!existsSync(file)) return;
      const body = JSON.parse(readFileSync(file, 'utf8'));
      const reply = turnReply(turns[answered]!)({ provider: 'openai', path: '', headers: {}, body }) as {
        toolCalls: Array<{ name: string; arguments: unknown }>;
      };
      answered++;
      const simplified = { content: null, tool_calls: reply.toolCalls };
      const answer =
        answered === 1
          ? {
              id: 'x',
              object: 'chat.completion',
              created: 0,
              model: body.model,
              choices: [
                {
                  index: 0,
                  finish_reason: 'tool_calls',
                  message: {
                    role: 'assistant',
                    content: null,
                    tool_calls: reply.toolCalls.map((call, i) => ({
                      id: `c${i}`,
                      type: 'function',
                      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                    })),
                  },
                },
              ],
              usage: { prompt_tokens: 1234, completion_tokens: 5, total_tokens: 1239 },
            }
          : simplified;
      writeFileSync(join(dir, `answer-${answered}.json`), JSON.stringify(answer));
    }, 25);
    try {
      const report = await runTask({ ...kit(relay), prepare: undefined }, task('archive'));
      expect(report).toMatchObject({ task: 'archive', success: true, steps: 3, actions: 3 });
      expect(answered).toBe(3);
      // Usage: the full body's own, then the kit's count of each simplified answer's request.
      expect(report.reportedInputTokens).toBe(1234 + report.promptTokensPerStep[1]! + report.promptTokensPerStep[2]!);
      expect(JSON.parse(readFileSync(join(dir, 'request-1.json'), 'utf8')).model).toBe('gpt-kit');
    } finally {
      clearInterval(person);
      await relay.close();
    }
  });

  it('gives up on an answer after its timeout and runs no further task', async () => {
    const relay = await startModelServer({ relay: { dir, timeoutMs: 300, pollMs: 25, log: () => undefined } });
    try {
      const started = Date.now();
      const reports = await runKit({ ...kit(relay), prepare: undefined }, [task('login'), task('archive')]);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({ task: 'login', success: false });
      expect(reports[0]!.message).toMatch(/no .*answer-1\.json within/);
      expect(relay.abandoned).toBe(true);
      expect(existsSync(join(dir, 'request-1.json'))).toBe(true);
    } finally {
      await relay.close();
    }
  });
});
