export {
  BrowserSessions,
  BrowserSession,
  SessionPage,
  type BrowserSessionsOptions,
  type NavigateResponse,
  type OperationInput,
  type OperationResult,
  type SessionStartOptions,
} from './client/index.js';
export type { OperationInfo, OperationRunOptions } from './client/result.js';
export { BrowserService, type Outcome } from './core/service.js';
export { ServiceError, type ErrorCode } from './core/errors.js';
export type { NavigateRequest, NavigationResponse } from './core/navigate.js';
export type { OperationName } from './core/operations/index.js';
export type { OutcomeMeta } from './core/outcome.js';
export type { ExtractOptions, ExtractResult } from './core/extract.js';
export type { Usage } from './core/usage.js';
export type { AgentConfig, AgentExecuteOptions, AgentResult, AgentAction } from './core/agent/schema.js';
export type { SessionInfo, PageEvent } from './core/sessions.js';
export type {
  Action,
  ActMethod,
  ActRequest,
  ActResult,
  ObserveRequest,
  ObserveResult,
  ObservedAction,
  ScreenshotRequest,
} from './core/act/index.js';
export { SCREENSHOT_LIMITS } from './core/act/index.js';
