/** How many MCP sessions may exist at /mcp and how long an unused one lives (apart: the CLI shows them in --help). */
export interface McpSessionLimits {
  idleTimeoutMs: number;
  maxSessions: number;
  maxSessionsPerKey: number;
}

export const MCP_SESSION_DEFAULTS: McpSessionLimits = { idleTimeoutMs: 5 * 60_000, maxSessions: 1_000, maxSessionsPerKey: 100 };
