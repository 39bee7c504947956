import type { CDPSession, Page } from 'playwright-core';
import type { SessionOptions } from './options.js';

/** The blockResources values. */
export type BlockedType = NonNullable<SessionOptions['blockResources']>[number];

/** CDP's name (Network.ResourceType) of each blockResources value, and back. */
const CDP_TYPES: Record<BlockedType, 'Image' | 'Media' | 'Font' | 'Stylesheet'> = {
  image: 'Image',
  media: 'Media',
  font: 'Font',
  stylesheet: 'Stylesheet',
};
const OUR_TYPES = new Map<string, BlockedType>(Object.entries(CDP_TYPES).map(([ours, cdp]) => [cdp, ours as BlockedType]));

/** Only frames: workers are not auto-attached (their requests are the page's business, and they would wait on us). */
const FRAMES_ONLY = [{ type: 'iframe' }];

interface PausedRequest {
  requestId: string;
  resourceType: string;
  request: { url: string };
}

/** A CDP message of a target under the page, as Target.receivedMessageFromTarget carries it. */
interface TargetMessage {
  method?: string;
  params?: { sessionId?: string; message?: string } & Partial<PausedRequest>;
}

/**
 * Chromium blocks requests of some resource types for one page and every out-of-process frame under it (cross-site
 * iframes run in their own renderer and target): CDP Fetch with resource-type patterns pauses only those requests, and
 * each is failed at once as blocked by the client. Nothing else is paused.
 *
 * Frame targets are auto-attached waiting for the debugger, so none of their requests goes out before their own Fetch
 * is on. Playwright's CDPSession speaks to one target, so they are attached the non-flat way: commands to a frame
 * travel inside Target.sendMessageToTarget, its events come back inside Target.receivedMessageFromTarget (nested once
 * per level of frames). Playwright's own sessions on the same targets (its routes, proxy authentication) are separate
 * Fetch clients; Chromium asks each in turn.
 */
export class TypeInterception {
  private nextId = 0;

  private constructor(
    private readonly cdp: CDPSession,
    private readonly patterns: Array<{ resourceType: (typeof CDP_TYPES)[BlockedType]; requestStage: 'Request' }>,
    private readonly onBlocked: (type: BlockedType, url: string) => void,
  ) {}

  /** Starts blocking `types` on `page` and its frames; resolves once the page's own requests are covered. */
  static async start(page: Page, types: readonly BlockedType[], onBlocked: (type: BlockedType, url: string) => void): Promise<void> {
    const cdp = await page.context().newCDPSession(page);
    const patterns = types.map((type) => ({ resourceType: CDP_TYPES[type], requestStage: 'Request' as const }));
    const interception = new TypeInterception(cdp, patterns, onBlocked);
    cdp.on('Fetch.requestPaused', (event) =>
      interception.paused(event, (failed) => void cdp.send('Fetch.failRequest', failed).catch(() => undefined)),
    );
    cdp.on('Target.attachedToTarget', (event) => interception.attached([event.sessionId]));
    cdp.on('Target.receivedMessageFromTarget', (event) => interception.received([event.sessionId], event.message));
    await cdp.send('Fetch.enable', { patterns: interception.patterns });
    await cdp.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: true,
      flatten: false,
      filter: FRAMES_ONLY,
    });
  }

  /** Fails a paused request (every paused request is of a blocked type) and counts it. */
  private paused(event: PausedRequest, fail: (failed: { requestId: string; errorReason: 'BlockedByClient' }) => void): void {
    fail({ requestId: event.requestId, errorReason: 'BlockedByClient' });
    this.onBlocked(OUR_TYPES.get(event.resourceType) ?? 'image', event.request.url);
  }

  /** A frame target attached, paused: its blocked types are intercepted and its own frames attached, then it runs. */
  private attached(path: string[]): void {
    this.sendTo(path, 'Fetch.enable', { patterns: this.patterns });
    this.sendTo(path, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false, filter: FRAMES_ONLY });
    this.sendTo(path, 'Runtime.runIfWaitingForDebugger', {});
  }

  private received(path: string[], raw: string): void {
    let message: TargetMessage;
    try {
      message = JSON.parse(raw) as TargetMessage;
    } catch {
      return;
    }
    const params = message.params;
    if (!params) return;
    if (message.method === 'Target.receivedMessageFromTarget' && params.sessionId && params.message !== undefined)
      this.received([...path, params.sessionId], params.message);
    else if (message.method === 'Target.attachedToTarget' && params.sessionId) this.attached([...path, params.sessionId]);
    else if (message.method === 'Fetch.requestPaused' && params.requestId && params.request)
      this.paused(params as PausedRequest, (failed) => this.sendTo(path, 'Fetch.failRequest', failed));
  }

  /**
   * Sends a command to the target at the end of `path` (session ids from the page down), wrapped once per level.
   * Commands of one session run in the order sent, so a frame's Fetch is on before it is let run. Answers are not
   * awaited: a frame that went away has nothing left to block.
   */
  private sendTo(path: string[], method: string, params: object): void {
    let message = JSON.stringify({ id: ++this.nextId, method, params });
    for (let i = path.length - 1; i > 0; i--)
      message = JSON.stringify({ id: ++this.nextId, method: 'Target.sendMessageToTarget', params: { sessionId: path[i], message } });
    void this.cdp.send('Target.sendMessageToTarget', { sessionId: path[0]!, message }).catch(() => undefined);
  }
}
