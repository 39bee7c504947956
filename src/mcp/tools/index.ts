import type { ToolDefinition } from '../tool.js';
import { actTool } from './act.js';
import { agentExecuteTool } from './agent-execute.js';
import { extractTool } from './extract.js';
import { navigateTool } from './navigate.js';
import { observeTool } from './observe.js';
import { profilesTool } from './profiles.js';
import { screenshotTool } from './screenshot.js';
import { sessionEndTool } from './session-end.js';
import { sessionListTool } from './session-list.js';
import { sessionStartTool } from './session-start.js';

/** Every MCP tool, in the order clients list them. */
export const tools: ToolDefinition[] = [
  sessionStartTool,
  navigateTool,
  extractTool,
  observeTool,
  actTool,
  screenshotTool,
  sessionEndTool,
  sessionListTool,
  agentExecuteTool,
  profilesTool,
] as unknown as ToolDefinition[];
