import type { ToolDefinition } from '../tool.js';
import { actTool } from './act.js';
import { agentExecuteTool } from './agent-execute.js';
import { extractTool } from './extract.js';
import { navigateTool } from './navigate.js';
import { observeTool } from './observe.js';
import { screenshotTool } from './screenshot.js';
import { sessionEndTool } from './session-end.js';
import { sessionListTool } from './session-list.js';
import { sessionRecordingTool } from './session-recording.js';
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
  sessionRecordingTool,
  agentExecuteTool,
] as unknown as ToolDefinition[];
