import { randomBytes } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type CallToolResult, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../core/errors.js';
import { Round, type InputAsk } from './rounds.js';

/**
 * Tool calls run as tasks: the client gets a handle at once, polls the task's status, fetches its result (after
 * reconnecting too), or cancels it. Under MCP 2025-11-25 these are the protocol's experimental tasks, which the SDK
 * 1.x serves from a TaskStore (`forOwner`); under 2026-07-28, the Tasks extension (io.modelcontextprotocol/tasks,
 * mcp/modern.ts). Either way the task belongs to the API key (or token subject) that started it, not to an MCP
 * session: another key's task id is unknown, and a client that comes back on a new connection finds its tasks.
 *
 * The work runs in a round (mcp/rounds.ts): under 2026-07-28 what it asks the client (its model, a person) shows as
 * the task's `input_required` status, answered with tasks/update.
 */

/** Tools a client may run as a task: the long ones. */
export const TASK_TOOLS = new Set(['agent_execute']);
/** How long a task and its result are kept from its creation, unless the client asks for less. */
export const TASK_TTL_MS = 30 * 60_000;
const POLL_INTERVAL_MS = 1_000;
export const MAX_TASKS_PER_OWNER = 32;
export const MAX_TASKS = 1_000;

type Status = Task['status'];

export interface TaskEntry {
  id: string;
  owner: string;
  tool: string;
  status: Status;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  round: Round<CallToolResult>;
  expiry: NodeJS.Timeout;
}

const TERMINAL = new Set<Status>(['completed', 'failed', 'cancelled']);

export class TaskBook {
  private readonly entries = new Map<string, TaskEntry>();

  /** A new task of `owner`, its work not started yet; refused past the bounds. */
  create(owner: string, tool: string, ttlMs?: number | null): TaskEntry {
    let mine = 0;
    for (const entry of this.entries.values()) if (entry.owner === owner) mine++;
    if (mine >= MAX_TASKS_PER_OWNER || this.entries.size >= MAX_TASKS)
      throw new ServiceError(
        'session_limit',
        `Too many tasks kept (${mine >= MAX_TASKS_PER_OWNER ? `${MAX_TASKS_PER_OWNER} for this API key` : `${MAX_TASKS} on this server`}); cancel one, or wait for finished ones to expire.`,
      );
    const ttl = Math.min(TASK_TTL_MS, ttlMs && ttlMs > 0 ? ttlMs : TASK_TTL_MS);
    const now = new Date().toISOString();
    const id = randomBytes(24).toString('base64url');
    const expiry = setTimeout(() => this.expire(id), ttl);
    expiry.unref();
    const entry: TaskEntry = {
      id,
      owner,
      tool,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: ttl,
      round: new Round<CallToolResult>(owner, tool),
      expiry,
    };
    this.entries.set(id, entry);
    return entry;
  }

  /** Starts the task's work; its end sets the status (a tool error is `failed` under 2025-11-25, per its spec). */
  start(entry: TaskEntry, work: (round: Round<CallToolResult>) => Promise<CallToolResult>): void {
    entry.round.start(work);
    void entry.round.done.then((result) => this.update(entry, result.isError ? 'failed' : 'completed'));
  }

  /** The caller's task, or undefined (another key's task is as unknown as a made-up id). */
  get(owner: string, id: string): TaskEntry | undefined {
    const entry = this.entries.get(id);
    return entry?.owner === owner ? entry : undefined;
  }

  list(owner: string): TaskEntry[] {
    return [...this.entries.values()].filter((entry) => entry.owner === owner);
  }

  /** A status change; a finished task's status is final. `cancelled` stops the work. */
  update(entry: TaskEntry, status: Status, message?: string): void {
    if (TERMINAL.has(entry.status)) return;
    entry.status = status;
    entry.statusMessage = message;
    entry.lastUpdatedAt = new Date().toISOString();
    if (status === 'cancelled') entry.round.cancel(new ServiceError('cancelled', 'The task was cancelled by the client.'));
  }

  /** The 2025-11-25 status of an entry: the SDK 1.x Task shape. */
  legacyTask(entry: TaskEntry): Task {
    return {
      taskId: entry.id,
      status: entry.status,
      ...(entry.statusMessage ? { statusMessage: entry.statusMessage } : {}),
      ttl: entry.ttlMs,
      createdAt: entry.createdAt,
      lastUpdatedAt: entry.lastUpdatedAt,
      pollInterval: POLL_INTERVAL_MS,
    };
  }

  /** The 2026-07-28 status of an entry (the Tasks extension's DetailedTask): questions open, result or nothing. */
  modernTask(entry: TaskEntry): Record<string, unknown> {
    const base = {
      taskId: entry.id,
      ...(entry.statusMessage ? { statusMessage: entry.statusMessage } : {}),
      createdAt: entry.createdAt,
      lastUpdatedAt: entry.lastUpdatedAt,
      ttlMs: entry.ttlMs,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    const result = entry.round.value;
    if (entry.status === 'cancelled') return { ...base, status: 'cancelled' };
    // A tool error is a result here: the extension's `failed` carries JSON-RPC errors, which tools/call never answers.
    if (result) return { ...base, status: 'completed', result };
    const asks: Record<string, InputAsk> = entry.round.openAsks();
    if (Object.keys(asks).length) return { ...base, status: 'input_required', inputRequests: asks };
    return { ...base, status: 'working' };
  }

  /** The SDK 1.x TaskStore of one owner, for a 2025-11-25 server (MCP sessions are ignored: tasks are the owner's). */
  forOwner(owner: string): TaskStore {
    const mine = (id: string) => {
      const entry = this.get(owner, id);
      if (!entry) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${id}`);
      return entry;
    };
    return {
      createTask: async (params: CreateTaskOptions, _requestId, request) =>
        this.legacyTask(this.create(owner, String((request.params as { name?: unknown } | undefined)?.name ?? ''), params.ttl)),
      getTask: async (id) => {
        const entry = this.get(owner, id);
        return entry ? this.legacyTask(entry) : null;
      },
      // The work's own end sets the status (start): what the SDK stores after it changes nothing.
      storeTaskResult: async () => undefined,
      getTaskResult: async (id) => {
        const result = mine(id).round.value;
        if (!result) throw new McpError(ErrorCode.InvalidParams, `Task ${id} has no result yet.`);
        return result as Result;
      },
      updateTaskStatus: async (id, status, message) => this.update(mine(id), status, message),
      listTasks: async () => ({ tasks: this.list(owner).map((entry) => this.legacyTask(entry)) }),
    };
  }

  /** At its TTL a task is dropped, and stopped if it still runs. */
  private expire(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    entry.round.cancel(new ServiceError('timeout', `The task reached its time to live (${Math.round(entry.ttlMs / 1000)} s).`));
  }

  close(): void {
    for (const entry of this.entries.values()) {
      clearTimeout(entry.expiry);
      entry.round.cancel(new ServiceError('browser_unavailable', 'The server is shutting down.'));
    }
    this.entries.clear();
  }
}
