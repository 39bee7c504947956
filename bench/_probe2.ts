import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import type { Session } from '../src/core/sessions.js';
import { takeSnapshot } from '../src/core/snapshot/index.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
const page = process.argv[2] ?? 'big.html';
const site = await startSiteServer();
const service = new BrowserService({ logger: silentLogger() });
const { id } = await service.startSession('p');
await service.operate('p', id, async (s: Session) => {
  await s.page.goto(site.url('/pages/' + page), { waitUntil: 'load' });
  const cdp = await s.watched.cdp();
  const t: Record<string, number[]> = { raw: [], rawEnabled: [], oursEnabled: [], aria: [] };
  const time = async (k: string, f: () => Promise<unknown>) => { const a = performance.now(); await f(); t[k]!.push(performance.now() - a); };
  for (let i = 0; i < 5; i++) {
    await time('raw', () => cdp.send('Accessibility.getFullAXTree', {}));
    await time('aria', () => s.page.locator('body').ariaSnapshot());
  }
  await cdp.send('Accessibility.enable');
  for (let i = 0; i < 5; i++) {
    await time('rawEnabled', () => cdp.send('Accessibility.getFullAXTree', {}));
    await time('oursEnabled', () => takeSnapshot(s));
  }
  for (const [k, v] of Object.entries(t)) console.log(k, v.map(Math.round).join(' '), 'median', Math.round(v.sort((x, y) => x - y)[2]!));
});
await service.close(); await site.close();
