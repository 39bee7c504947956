export { runAgent, AGENT_DEFAULTS, type AgentDeps } from './loop.js';
export { BROWSER_TOOLS } from './tools.js';
export * from './schema.js';
