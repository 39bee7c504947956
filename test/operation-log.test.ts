import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentExecuteOperation, defineSessionOperation, navigateOperation } from '../src/core/operations/index.js';
import { useSiteService } from './fixtures/site-service.js';

/** A session operation of the table needs only its work: the queue, the action log and the trace come with it. */
describe('session operations in the action log', () => {
  const fixture = useSiteService({ env: {} });
  let id: string;

  beforeAll(async () => {
    id = (await fixture.service.startSession('t')).id;
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
    await fixture.service.run(navigateOperation, 't', id, { url: fixture.site.url('/index.html') });
    const title = await fixture.service.operate('t', id, (session) => session.page.title());
    const outcome = await pageTitle.run({ upper: true }, { service: fixture.service, owner: 't', sessionId: id, ctx: {} });
    expect(outcome.result).toEqual({ title: title.result.toUpperCase() });
    const entries = fixture.service.actionLog('t', id).entries;
    expect(entries.map((entry) => entry.operation)).toEqual(['navigate', 'page_title']);
    expect(entries[1]).toMatchObject({ actionId: outcome.actionId, arguments: { upper: true }, outcome: 'ok' });
  });

  it('logs the agent as agent_execute, the name every door calls it by, failures included', async () => {
    const failed = await fixture.service
      .run(agentExecuteOperation, 't', id, { executeOptions: { instruction: 'Say done.' } })
      .then(() => undefined)
      .catch((err: { code?: string }) => err.code);
    expect(failed).toBeDefined();
    expect(fixture.service.actionLog('t', id).entries.at(-1)).toMatchObject({
      operation: 'agent_execute',
      outcome: 'error',
      errorCode: failed,
    });
  });
});
