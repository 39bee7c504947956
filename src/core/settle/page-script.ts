import { randomBytes } from 'node:crypto';

/**
 * The in-page tracker of pending work (docs/act.md, "Waiting for the page to settle"). One per document and frame, in
 * the page's own world (the only place its timers can be seen), installed before the page's scripts run. It leaves no
 * global behind: its state lives in a closure, the functions it wraps are Proxies of the originals (their `toString`,
 * `name` and `length` are the native ones), and it answers only an event whose type is a random key of this process.
 *
 * What it counts, each item only when the work was started by the latest action (its chain began after the mark):
 * - timers: `setTimeout` of at most SHORT_TIMER_MS, and timers and animation frames they schedule in turn, for at most
 *   CHAIN_MS from the first; intervals are never pending, and the DOM changes they make count as activity only for
 *   CHAIN_MS after the interval was set by the latest action (a short render in steps), background after that (a clock);
 * - animation frames the same way (a loop that never stops stops counting after CHAIN_MS);
 * - CSS transitions and finite animations, up to ANIMATION_CAP_MS each; endless animations never count;
 * - the time of the last DOM change outside background work, and of the last fetch/XHR started (the network itself is
 *   tracked from Playwright's side).
 * Microtasks need no counting: the probe is a task of its own, so every microtask queued before it has run.
 * Strings, so no bundler helper leaks into the page.
 */
export const SHORT_TIMER_MS = 1_000;
export const CHAIN_MS = 1_500;
export const ANIMATION_CAP_MS = 1_000;

/** Marks an overlay we put on the page for a screenshot (act/mask.ts): its coming and going is no DOM change to wait for. */
export const OVERLAY_ATTRIBUTE = 'data-bsm-overlay';

/** The event type the tracker answers: random per process, so a page cannot listen for it. */
const KEY = randomBytes(12).toString('hex');

/** Asks a window's tracker: `(win, command) => reply`, null where there is no tracker or the window is out of reach. */
const ASK = `(win, command) => {
  try {
    const event = new win.CustomEvent(${JSON.stringify(KEY)}, { detail: { command, reply: null } });
    win.document.dispatchEvent(event);
    return event.detail.reply;
  } catch { return null; }
}`;

/** The install script: an expression that installs the tracker (true) or finds it there already (false). */
export const INSTALL_TRACKER = `(() => {
  const KEY = ${JSON.stringify(KEY)}, SHORT = ${SHORT_TIMER_MS}, CHAIN = ${CHAIN_MS}, ANIM_CAP = ${ANIMATION_CAP_MS};
  const w = window, doc = w.document;
  if (!doc) return false;
  const ping = new CustomEvent(KEY, { detail: { command: 'ping', reply: null } });
  doc.dispatchEvent(ping);
  if (ping.detail.reply) return false;
  const apply = Reflect.apply, perf = w.performance, perfNow = Performance.prototype.now, origin = perf.timeOrigin;
  const now = () => apply(perfNow, perf, []);
  const addListener = EventTarget.prototype.addEventListener;
  const getAnimations = Document.prototype.getAnimations;
  const getEntries = Performance.prototype.getEntriesByType;
  const state = { mark: 0, lastChange: now(), count: 0, lastWork: 0 };
  const timers = new Map(), frames = new Map(), transitions = new Set();
  let root = -1, periodic = false;
  const background = () => root >= 0 && (root < state.mark || now() > root + CHAIN);
  // Our own overlays (a screenshot's masks) come and go under <html>: no change of the page.
  const ours = (r) => r.type === 'childList' && r.target === doc.documentElement &&
    [...r.addedNodes, ...r.removedNodes].every((n) => n.nodeType === 1 && n.hasAttribute(${JSON.stringify(OVERLAY_ATTRIBUTE)}));
  const changed = (records) => records.some((r) => !ours(r));
  const observer = new MutationObserver((records) => { if (changed(records)) { state.lastChange = now(); state.count++; } });
  observer.observe(doc, { subtree: true, childList: true, characterData: true, attributes: true });
  const flush = (isBackground) => {
    const records = observer.takeRecords();
    if (changed(records) && !isBackground) { state.lastChange = now(); state.count++; }
  };
  const run = (cb, self, args, r, p) => {
    flush(false);
    const outer = root, outerPeriodic = periodic;
    root = r; periodic = p;
    try { return apply(cb, self, args); }
    finally {
      const isBackground = background();
      flush(isBackground);
      if (!isBackground) state.lastWork = now();
      root = outer; periodic = outerPeriodic;
    }
  };
  const chainRoot = () => (root >= 0 ? root : now());
  const wrap = (name, trap) => { const original = w[name]; if (typeof original === 'function') w[name] = new Proxy(original, { apply: trap }); };
  wrap('setTimeout', (target, self, args) => {
    const cb = args[0];
    if (typeof cb !== 'function') return apply(target, self, args);
    const r = chainRoot(), p = periodic, delay = Number(args[1]) || 0;
    let id;
    args[0] = function () { timers.delete(id); return run(cb, this, arguments, r, p); };
    id = apply(target, self, args);
    if (delay <= SHORT) timers.set(id, { due: now() + delay, root: r, periodic: p });
    return id;
  });
  wrap('setInterval', (target, self, args) => {
    const cb = args[0];
    if (typeof cb !== 'function') return apply(target, self, args);
    const r = chainRoot();
    args[0] = function () { return run(cb, this, arguments, r, true); };
    return apply(target, self, args);
  });
  const clear = (target, self, args) => { timers.delete(args[0]); return apply(target, self, args); };
  wrap('clearTimeout', clear);
  wrap('clearInterval', clear);
  wrap('requestAnimationFrame', (target, self, args) => {
    const cb = args[0];
    if (typeof cb !== 'function') return apply(target, self, args);
    const r = chainRoot(), p = periodic;
    let id;
    args[0] = function () { frames.delete(id); return run(cb, this, arguments, r, p); };
    id = apply(target, self, args);
    frames.set(id, { root: r, periodic: p });
    return id;
  });
  wrap('cancelAnimationFrame', (target, self, args) => { frames.delete(args[0]); return apply(target, self, args); });
  const started = () => { if (!background()) state.lastWork = now(); };
  wrap('fetch', (target, self, args) => { started(); return apply(target, self, args); });
  if (w.XMLHttpRequest) {
    const proto = w.XMLHttpRequest.prototype, send = proto.send;
    proto.send = new Proxy(send, { apply: (target, self, args) => { started(); return apply(target, self, args); } });
  }
  const listen = (type, fn) => apply(addListener, w, [type, fn, { capture: true, passive: true }]);
  listen('transitionrun', (event) => { transitions.add({ target: event.target, property: event.propertyName, start: now() }); });
  const ended = (event) => {
    for (const entry of transitions) if (entry.target === event.target && entry.property === event.propertyName) transitions.delete(entry);
  };
  listen('transitionend', ended);
  listen('transitioncancel', ended);
  // Whether the document has made a closed shadow root: the page text's reader cannot reach one from a script and
  // asks the browser for them only then.
  let closedShadow = false;
  const attachShadow = Element.prototype.attachShadow;
  if (typeof attachShadow === 'function') {
    Element.prototype.attachShadow = new Proxy(attachShadow, {
      apply: (target, self, args) => {
        const root = apply(target, self, args);
        if (args[0] && args[0].mode === 'closed') closedShadow = true;
        return root;
      },
    });
  }
  const answer = (command) => {
    const t = now();
    if (command === 'mark') state.mark = t;
    flush(false);
    let pendingTimers = 0, pendingFrames = 0, pendingAnimations = 0;
    for (const [id, timer] of timers) {
      if (timer.due + SHORT < t) timers.delete(id);
      else if (!timer.periodic && timer.root >= state.mark && timer.due <= timer.root + CHAIN) pendingTimers++;
    }
    for (const frame of frames.values()) if (!frame.periodic && frame.root >= state.mark && t < frame.root + CHAIN) pendingFrames++;
    for (const entry of transitions) {
      if (t > entry.start + ANIM_CAP) transitions.delete(entry);
      else if (entry.start >= state.mark) pendingAnimations++;
    }
    if (!pendingAnimations && getAnimations) {
      for (const animation of apply(getAnimations, doc, [])) {
        if (animation.playState !== 'running' || !animation.effect) continue;
        const timing = animation.effect.getComputedTiming();
        const at = Number(timing.localTime ?? 0);
        const startedAt = animation.startTime === null ? t : Number(animation.startTime);
        if (Number.isFinite(timing.endTime) && startedAt >= state.mark && at < Math.min(timing.endTime, ANIM_CAP)) pendingAnimations++;
      }
    }
    const nav = apply(getEntries, perf, ['navigation'])[0];
    return {
      origin, now: origin + t, mark: origin + state.mark, loading: doc.readyState === 'loading',
      loadedAt: nav && nav.loadEventEnd > 0 ? origin + nav.loadEventEnd : 0,
      lastChange: origin + state.lastChange, count: state.count, lastWork: state.lastWork ? origin + state.lastWork : 0,
      timers: pendingTimers, frames: pendingFrames, animations: pendingAnimations,
    };
  };
  listen(KEY, (event) => {
    event.stopImmediatePropagation();
    const detail = event.detail;
    if (detail && typeof detail === 'object')
      detail.reply = detail.command === 'ping' ? true : detail.command === 'shadow' ? closedShadow : answer(detail.command);
  });
  return true;
})()`;

/**
 * Asks the tracker of the document and of every same-origin frame (installing it first in a document that started
 * before the init script, e.g. in a bare test setup) and sums their answers; `command` 'mark' starts a new action.
 */
export function probeScript(command: 'probe' | 'mark'): string {
  return `(() => {
  const ask = (win) => (${ASK})(win, ${JSON.stringify(command)});
  let fresh = false;
  let top = ask(window);
  if (!top) { fresh = ${INSTALL_TRACKER}; top = ask(window); }
  if (!top) return null;
  const visit = (win) => {
    for (let i = 0; i < win.frames.length; i++) {
      try {
        const frame = win.frames[i], inner = ask(frame);
        if (inner) {
          top.count += inner.count; top.lastChange = Math.max(top.lastChange, inner.lastChange); top.lastWork = Math.max(top.lastWork, inner.lastWork);
          top.timers += inner.timers; top.frames += inner.frames; top.animations += inner.animations;
        }
        visit(frame);
      } catch { /* a cross-origin frame: out of reach */ }
    }
  };
  visit(window);
  return { ...top, fresh };
})()`;
}

/** What the tracker answers; times are epoch ms (the page's clock) so they compare with the network tracker's. */
export interface Probe {
  /** The tracker was installed by this probe: the document started before it and its history is unknown. */
  fresh: boolean;
  /** Identifies the document: a new document has a new time origin. */
  origin: number;
  now: number;
  /** When the latest action started in this document; its time origin when none did (a new page). */
  mark: number;
  loading: boolean;
  /** 0 until the load event has finished. */
  loadedAt: number;
  /** The last DOM change outside background work (intervals, chains of timers older than CHAIN_MS, work from before the mark). */
  lastChange: number;
  count: number;
  /** The last time tracked work ran or a fetch/XHR was started; 0 when none. */
  lastWork: number;
  timers: number;
  frames: number;
  animations: number;
}

/** Whether the document has made a closed shadow root since the tracker was installed (false without a tracker). */
export const HAS_CLOSED_SHADOW = `(${ASK})(window, 'shadow') === true`;
