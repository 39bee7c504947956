/**
 * The agent on task suites (TodoMVC, MiniWoB++, our test sites), per task: success read from the page, steps,
 * actions, prompt tokens per step and in total (counted from the request bodies: o200k text, OpenAI's image rule).
 *
 *   npm run bench agent-tasks                                   # the scripted model on the fake server (tasks with a script)
 *   npm run bench agent-tasks -- --base-url https://api.openai.com/v1 --model gpt-4.1-mini   # key from OPENAI_API_KEY
 *   npm run bench agent-tasks -- --relay /tmp/relay --only login,enter-text   # a person or assistant answers each request
 *
 * Options: --suite todomvc,miniwob,sites,novel (novel: real model or relay only); --only name,...; --key-env NAME (default OPENAI_API_KEY); --relay-timeout
 * seconds per answer (default 600; when one is missed the run stops); --screenshots on|off; --out FILE (the reports as
 * JSON). See docs/agent.md, "Evaluation kit".
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BrowserSessions } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { startFakeLLM } from '../test/fixtures/fake-llm.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { runKit, type KitReport } from './agent-kit/harness.js';
import { startModelServer, type ModelBackend } from './agent-kit/model-server.js';
import { turnReply } from './agent-kit/scripted.js';
import { TASKS, type KitTask } from './agent-kit/tasks.js';
import { median, printTable } from './table.js';

export function kitOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      model: { type: 'string' },
      'key-env': { type: 'string', default: 'OPENAI_API_KEY' },
      relay: { type: 'string' },
      'relay-timeout': { type: 'string', default: '600' },
      suite: { type: 'string' },
      only: { type: 'string' },
      screenshots: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const list = (value: unknown) => (typeof value === 'string' ? value.split(',').filter(Boolean) : undefined);
  return {
    baseURL: values['base-url'] as string | undefined,
    model: values.model as string | undefined,
    keyEnv: values['key-env'] as string,
    relay: values.relay as string | undefined,
    relayTimeoutMs: Number(values['relay-timeout']) * 1000,
    suites: list(values.suite),
    only: list(values.only),
    autoScreenshot: values.screenshots === undefined ? undefined : values.screenshots !== 'off',
    out: values.out as string | undefined,
  };
}

export function printReports(title: string, reports: KitReport[]): void {
  printTable(
    title,
    ['task', 'suite', 'success', 'steps', 'actions', 'prompt tokens/step', 'prompt tokens', 'of which images', 'reported input tokens'],
    [
      ...reports.map((report) => [
        report.task,
        report.suite,
        report.success ? 'yes' : 'no',
        report.steps,
        report.actions,
        report.promptTokensPerStep.length ? Math.round(report.promptTokens / report.promptTokensPerStep.length) : 0,
        report.promptTokens,
        report.imageTokens,
        report.reportedInputTokens,
      ]),
      [
        'all',
        '',
        `${reports.filter((report) => report.success).length}/${reports.length}`,
        median(reports.map((report) => report.steps)),
        median(reports.map((report) => report.actions)),
        Math.round(median(reports.map((report) => report.promptTokens / Math.max(1, report.promptTokensPerStep.length)))),
        reports.reduce((sum, report) => sum + report.promptTokens, 0),
        reports.reduce((sum, report) => sum + report.imageTokens, 0),
        reports.reduce((sum, report) => sum + report.reportedInputTokens, 0),
      ],
    ],
  );
  for (const report of reports.filter((one) => !one.success)) console.log(`- ${report.task}: ${report.message.slice(0, 300)}`);
}

export async function run(): Promise<void> {
  const options = kitOptions(process.argv.slice(2));
  const scripted = !options.baseURL && !options.relay;
  const tasks = TASKS.filter(
    (task: KitTask) =>
      (!options.suites || options.suites.includes(task.suite)) &&
      (!options.only || options.only.includes(task.name)) &&
      (!scripted || task.script),
  );
  const fake = scripted ? await startFakeLLM() : undefined;
  const backend: ModelBackend = options.relay
    ? { relay: { dir: options.relay, timeoutMs: options.relayTimeoutMs } }
    : { upstream: options.baseURL ?? fake!.openaiBaseURL };
  const apiKey = scripted || options.relay ? 'kit' : process.env[options.keyEnv];
  if (!apiKey) throw new Error(`agent-tasks: set ${options.keyEnv} (or --key-env NAME) to the endpoint's key`);
  const [site, models] = await Promise.all([startSiteServer(), startModelServer(backend)]);
  const lib = new BrowserSessions({ logger: silentLogger(), env: {} });
  const model = options.model ?? (scripted ? 'scripted' : options.relay ? 'relay' : 'gpt-4.1-mini');
  try {
    const reports = await runKit(
      {
        lib,
        site,
        models,
        model,
        apiKey,
        modelTimeoutMs: options.relay ? options.relayTimeoutMs + 30_000 : 300_000,
        autoScreenshot: options.autoScreenshot,
        prepare: (task) => {
          if (!fake) return;
          fake.reset();
          fake.enqueue(...task.script!.map(turnReply));
        },
        onReport: (report) =>
          console.error(`agent-tasks: ${report.task} ${report.success ? 'succeeded' : 'failed'} in ${report.steps} steps`),
      },
      tasks,
    );
    printReports(
      `Agent on task suites: ${model}${scripted ? ' (scripted, fake server)' : ''}; prompt tokens counted from request bodies (OpenAI's counting rules, images included)`,
      reports,
    );
    if (options.out) writeFileSync(options.out, `${JSON.stringify({ model, scripted, reports }, null, 2)}\n`);
  } finally {
    await lib.close();
    await Promise.all([site.close(), models.close(), fake?.close()]);
  }
}
