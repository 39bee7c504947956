import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../src/core/logger.js';
import { agentExecuteOperation, defineSessionOperation, navigateOperation } from '../src/core/operations/index.js';
import { BrowserService } from '../src/core/service.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

/** A session operation of the table needs only its work: the queue, the action log and the trace come with it. */
describe('session operations in the action log', () => {
  let site: SiteServer;
  let service: BrowserService;
  let id: string;

  beforeAll(async () => {
    site = await startSiteServer();
    service = new BrowserService({ logger: silentLogger(), env: {} });
    id = (await service.startSession('t')).id;
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  it('logs a newly declared operation under its tool name, with no line of its own in the service', async () => {
    const pageTitle = defineSessionOperation({
      name: 'page_title',
      title: 'Page title',
      description: 'The title of the page.',
      input: z.object({ upper: z.boolean().optional() }).strict(),
      output: z.object({ title: z.string() }),
      kind: 'read',
      rest: { method: 'POST', path: '/v1/sessions/{id}/pageTitle', operationId: 'SessionPageTitle' },
      work: async (session, input) => {
        const title = await session.page.title();
        return { result: { title: input.upper ? title.toUpperCase() : title } };
      },
    });
    await service.run(navigateOperation, 't', id, { url: site.url('/index.html') });
    const title = await service.operate('t', id, (session) => session.page.title());
    const outcome = await pageTitle.run({ upper: true }, { service, owner: 't', sessionId: id, ctx: {} });
    expect(outcome.result).toEqual({ title: title.result.toUpperCase() });
    const entries = service.actionLog('t', id).entries;
    expect(entries.map((entry) => entry.operation)).toEqual(['navigate', 'page_title']);
    expect(entries[1]).toMatchObject({ actionId: outcome.actionId, arguments: { upper: true }, outcome: 'ok' });
  });

  it('logs the agent as agent_execute, the name every door calls it by, failures included', async () => {
    const failed = await service
      .run(agentExecuteOperation, 't', id, { executeOptions: { instruction: 'Say done.' } })
      .then(() => undefined)
      .catch((err: { code?: string }) => err.code);
    expect(failed).toBeDefined();
    expect(service.actionLog('t', id).entries.at(-1)).toMatchObject({ operation: 'agent_execute', outcome: 'error', errorCode: failed });
  });
});
