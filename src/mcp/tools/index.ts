import type { ToolDefinition } from '../tool.js';
import { agentExecuteTool } from './agent-execute.js';
import { extractTool } from './extract.js';
import { navigateTool } from './navigate.js';
import { sessionEndTool } from './session-end.js';
import { sessionListTool } from './session-list.js';
import { sessionStartTool } from './session-start.js';

/** Every MCP tool, in the order clients list them. */
export const tools: ToolDefinition[] = [
  sessionStartTool,
  navigateTool,
  extractTool,
  sessionEndTool,
  sessionListTool,
  agentExecuteTool,
] as unknown as ToolDefinition[];
