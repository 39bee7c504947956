// The session and its collaborators live in src/core/session/; this module keeps the imports of its users short.
export { EventLog, PageEventSchema, type PageEvent } from './page/events.js';
export { FrameRegistry } from './session/frames.js';
export { WatchedPage, type PageWatcher } from './page/watched.js';
export { OperationQueue } from './session/queue.js';
export { SessionPages, type SessionPagesOptions } from './session/pages.js';
export { SessionRegistry, newSessionId, sessionInstance, type SessionRegistryOptions } from './session/registry.js';
export { FrameInfoSchema, Session, SessionInfoSchema, type SessionInfo, type SessionInit } from './session/session.js';
export { FeatureState, stateKey, type StateKey } from './page/state.js';
export {
  RecordOption,
  SessionOptions,
  SESSION_OPTION_NAMES,
  checkOptionRules,
  listedSessionOptions,
  type SessionOptionsRules,
  type SessionOptionName,
} from './session/options.js';
