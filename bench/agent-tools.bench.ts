/**
 * The agent's tool list in two shapes, as each provider's request carries it (o200k tokens of the JSON): one `act`
 * tool with act's method enum (what the agent sends), and one tool per act method with flat arguments (targets beside
 * the method's own; dragTo's drop point renamed targetX, targetY). The other tools are the same in both.
 */
import { z } from 'zod';
import { ACT_METHODS, METHOD_ARGUMENTS, METHOD_DESCRIPTIONS, PAGE_METHODS, POINT_METHODS, type ActMethod } from '../src/core/act/index.js';
import { ACT_TOOL } from '../src/core/agent/act-tools.js';
import { BROWSER_TOOLS } from '../src/core/agent/toolbox.js';
import type { ToolSpec } from '../src/core/llm/types.js';
import { countTokens } from '../src/core/tokens.js';
import { toJsonSchema } from '../src/core/validation.js';
import { printTable } from './table.js';

const spec = (tool: { name: string; description: string; input: z.ZodType }): ToolSpec => ({
  name: tool.name,
  description: tool.description,
  inputSchema: toJsonSchema(tool.input),
});

const TARGETS = {
  ref: z.string().min(1).describe('Element ref from the page text, without brackets: "12", or "1-4" inside an iframe.'),
  selector: z.string().min(1).describe('Or a Playwright selector of one visible element, for what has no ref.'),
  x: z.number().describe('Or a point of the viewport, CSS px, with y.'),
  y: z.number(),
};

/** The rejected shape: a tool per method, its input the method's targets and its own arguments side by side. */
function perMethodTool(method: ActMethod): ToolSpec {
  const targets = PAGE_METHODS.has(method) ? [] : POINT_METHODS.has(method) ? ['ref', 'selector', 'x', 'y'] : ['ref', 'selector'];
  const own = METHOD_ARGUMENTS[method].shape as Record<string, z.ZodType>;
  const input = z
    .object({
      ...Object.fromEntries(targets.map((field) => [field, TARGETS[field as keyof typeof TARGETS].optional()])),
      ...Object.fromEntries(
        Object.entries(own).map(([name, schema]) => [targets.includes(name) ? `target${name.toUpperCase()}` : name, schema]),
      ),
    })
    .strict();
  return spec({ name: method, description: METHOD_DESCRIPTIONS[method], input });
}

const openai = (tools: ToolSpec[]) =>
  countTokens(
    JSON.stringify(
      tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      })),
    ),
  );
const anthropic = (tools: ToolSpec[]) =>
  countTokens(JSON.stringify(tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }))));

export async function run(): Promise<void> {
  const single = BROWSER_TOOLS.map(spec);
  const others = BROWSER_TOOLS.filter((tool) => tool !== ACT_TOOL).map(spec);
  const perMethod = [others[0]!, ...ACT_METHODS.map(perMethodTool), ...others.slice(1)];
  const row = (shape: string, tools: ToolSpec[]) => [shape, tools.length, openai(tools), anthropic(tools), openai(tools) - openai(others)];
  printTable(
    'Agent tools, o200k tokens of the tools array as each provider is sent it',
    ['shape', 'tools', 'OpenAI', 'Anthropic', 'act part (OpenAI)'],
    [row('one act tool, method enum (sent)', single), row('one tool per act method', perMethod)],
  );
}
