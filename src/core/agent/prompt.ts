import type { ChatMessage, ContentPart, ToolCall } from '../llm/types.js';
import type { AgentExecuteOptions } from './schema.js';
import type { CallResult } from './toolbox.js';

/** Page text beyond this is cut; the model can scroll or use extract for the rest. */
const MAX_PAGE_TEXT_CHARS = 40_000;

const BASE_PROMPT = `You control a real web browser to carry out a task for a user.
Each turn you get the current page state: URL, title, and the page as text in which every element you can act on carries a ref such as 12 (shown as "[12] button: Send", and links as "[Pricing](41)"; inside iframes 1-12). Act by calling tools with those refs, without brackets. Refs are only valid for the latest page state.
Rules:
- Use only information from the page, the task and tool results; never invent URLs, values or credentials.
- Variables such as %password% stand for secrets you are not shown: type the placeholder exactly as written and the browser fills in the value.
- If an action fails, read the error and try something else (another ref, scrolling, waiting).
- Call several tools in one turn only when each does not depend on the result of the one before.
- When the task is complete, or clearly impossible, call done with success and a message that contains the answer.`;

export function systemPrompt(instructions: string | undefined, variableNames: string[]): string {
  const parts = [BASE_PROMPT];
  if (variableNames.length) parts.push(`Variables available: ${variableNames.map((name) => `%${name}%`).join(', ')}.`);
  if (instructions?.trim()) parts.push(`Instructions from the operator:\n${instructions.trim()}`);
  return parts.join('\n\n');
}

export function taskMessage(options: AgentExecuteOptions): string {
  const parts = [`Task: ${options.instruction}`];
  if (options.context?.trim()) parts.push(`Context: ${options.context.trim()}`);
  return parts.join('\n');
}

/** What the model is shown of the page at the start of a step. */
export interface PageState {
  step: number;
  maxSteps: number;
  url: string;
  title: string;
  /** Page text with refs, or why it could not be read. */
  text: string;
  /** Dialogs, popups... handled since the previous state. */
  notes: string[];
  /** Base64 JPEG. */
  screenshot?: string;
}

/**
 * The conversation sent each step. Only the newest page state is kept in full; older ones shrink to one line and lose
 * their screenshot, so the prompt grows by the size of the actions, not by a page per step.
 */
export class History {
  readonly messages: ChatMessage[] = [];
  private lastStateIndex = -1;
  private lastStateSummary = '';

  constructor(task: string) {
    this.messages.push({ role: 'user', content: task });
  }

  addState(state: PageState): void {
    if (this.lastStateIndex >= 0) this.messages[this.lastStateIndex] = { role: 'user', content: this.lastStateSummary };
    const text = [
      `Page state before step ${state.step} of ${state.maxSteps}:`,
      `URL: ${state.url}`,
      `Title: ${state.title}`,
      ...state.notes.map((note) => `Note: ${note}`),
      'Page text:',
      clipPage(state.text),
    ].join('\n');
    const content: string | ContentPart[] = state.screenshot
      ? [
          { type: 'text', text },
          { type: 'image', mediaType: 'image/jpeg', data: state.screenshot },
        ]
      : text;
    this.lastStateIndex = this.messages.push({ role: 'user', content }) - 1;
    this.lastStateSummary = `(Page state before step ${state.step}: ${state.url} "${state.title}"; superseded by a later state.)`;
  }

  addAssistant(text: string, toolCalls: ToolCall[]): void {
    this.messages.push({ role: 'assistant', content: text, toolCalls: toolCalls.length ? toolCalls : undefined });
  }

  addToolResult(call: ToolCall, result: CallResult): void {
    this.messages.push({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content: result.text,
      isError: result.error !== undefined,
    });
  }

  addNudge(): void {
    this.messages.push({ role: 'user', content: 'Answer with a tool call: act on the page, or call done when the task is finished.' });
  }
}

function clipPage(text: string): string {
  if (text.length <= MAX_PAGE_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_PAGE_TEXT_CHARS)}\n... (page text cut after ${MAX_PAGE_TEXT_CHARS} characters; scroll or use extract for the rest)`;
}
