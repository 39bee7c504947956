import { randomBytes } from 'node:crypto';
import { ServiceError } from '../core/errors.js';

/**
 * MCP 2026-07-28 has no server-to-client requests: a tool call that needs the client (its model, a person) answers
 * `input_required` with the requests and an opaque `requestState`, and the client calls the tool again with the
 * answers. Our operations ask in the middle of their work (an agent's tenth step needs the model), so a call that asks
 * keeps running here, as a round, between the client's calls: each call of the tool waits until the round finishes or
 * asks something, and answers that.
 *
 * The requestState is the round's id: 24 random bytes, as unguessable as a session id, and tied to the API key (or
 * token subject) that started it; another key's state is unknown. A round nobody calls back for is cancelled when
 * its question times out (SAMPLING_TIMEOUT_MS for the model, the live view's wait for a person), and a finished
 * round's result is kept until it is fetched or for KEEP_RESULT_MS.
 */

/** An embedded request of an input_required result: a method and its params (sampling, elicitation). */
export interface InputAsk {
  method: 'sampling/createMessage' | 'elicitation/create';
  params: Record<string, unknown>;
}

/** What one call of the tool answers: the round's result, or the questions still open. */
export type RoundStep<R> = { done: R } | { asks: Record<string, InputAsk>; requestState: string };

const KEEP_RESULT_MS = 120_000;
/** Rounds waiting for a client's answer, per owner and in all. */
export const MAX_ROUNDS_PER_OWNER = 16;
export const MAX_ROUNDS = 256;

interface OpenAsk {
  ask: InputAsk;
  settle(answer: unknown): void;
  fail(error: Error): void;
}

export class Round<R> {
  readonly id = randomBytes(24).toString('base64url');
  readonly controller = new AbortController();
  private readonly open = new Map<string, OpenAsk>();
  private keys = 0;
  private result?: { value: R };
  /** The calls waiting on this round (a client may retry twice with the same state): each is woken. */
  private readonly wakers = new Set<() => void>();
  /** Whether a call of the tool is waiting on this round now. */
  get waiting(): boolean {
    return this.wakers.size > 0;
  }
  lastCall = Date.now();

  constructor(
    readonly owner: string,
    readonly tool: string,
  ) {}

  /** The work's result, once it has ended (the work answers its errors as results: it never rejects). */
  done: Promise<R> = new Promise(() => undefined);

  /** Runs the work; its asks and its end wake the call that waits. */
  start(work: (round: Round<R>) => Promise<R>): this {
    this.done = work(this).then((value) => {
      this.result = { value };
      this.open.clear();
      this.wake();
      return value;
    });
    return this;
  }

  /** The questions open now, by key (a task's status shows them without waiting). */
  openAsks(): Record<string, InputAsk> {
    return Object.fromEntries([...this.open].map(([key, open]) => [key, open.ask]));
  }

  /** The result, when the work has ended. */
  get value(): R | undefined {
    return this.result?.value;
  }

  get finished(): boolean {
    return this.result !== undefined;
  }

  /** Asks the client; the answer arrives with the next call of the tool. Rejects after `timeoutMs`, or when cancelled. */
  ask(ask: InputAsk, timeoutMs: number, signal: AbortSignal, timeoutError: () => Error): Promise<unknown> {
    const key = `${ask.method === 'sampling/createMessage' ? 'sample' : 'human'}${++this.keys}`;
    return new Promise((resolve, reject) => {
      const end = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.open.delete(key);
      };
      const timer = setTimeout(() => (end(), reject(timeoutError())), timeoutMs);
      timer.unref();
      const onAbort = () => (end(), reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled')));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.open.set(key, { ask, settle: (answer) => (end(), resolve(answer)), fail: (error) => (end(), reject(error)) });
      this.wake();
    });
  }

  /** The client's answers, by the keys it was asked with; unknown keys are ignored, unanswered asks are asked again. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, answer] of Object.entries(responses ?? {})) this.open.get(key)?.settle(answer);
  }

  /** Waits until the round finishes or has a question open; a call dropped meanwhile cancels the round. */
  async next(signal: AbortSignal): Promise<RoundStep<R>> {
    this.lastCall = Date.now();
    const onAbort = () => this.controller.abort(new ServiceError('cancelled', 'The operation was cancelled by the client.'));
    signal.addEventListener('abort', onAbort, { once: true });
    let waker: (() => void) | undefined;
    try {
      while (!this.result && !this.open.size) {
        if (signal.aborted) onAbort();
        await new Promise<void>((resolve) => this.wakers.add((waker = resolve)));
        this.wakers.delete(waker!);
      }
    } finally {
      if (waker) this.wakers.delete(waker);
      this.lastCall = Date.now();
      signal.removeEventListener('abort', onAbort);
    }
    if (this.result) return { done: this.result.value };
    return { asks: this.openAsks(), requestState: this.id };
  }

  private wake(): void {
    for (const waker of this.wakers) waker();
  }

  /** Stops the work: its open questions fail, and the work sees the abort. */
  cancel(reason: Error): void {
    this.controller.abort(reason);
    for (const open of this.open.values()) open.fail(reason);
  }
}

/** The rounds waiting for their client, by requestState. */
export class Rounds<R> {
  private readonly rounds = new Map<string, Round<R>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(), 10_000);
    this.sweeper.unref();
  }

  get size(): number {
    return this.rounds.size;
  }

  /** Keeps a round that asked, for the client's next call; refused past the bounds. */
  keep(round: Round<R>): void {
    if (this.rounds.has(round.id)) return;
    let mine = 0;
    for (const kept of this.rounds.values()) if (kept.owner === round.owner) mine++;
    if (mine >= MAX_ROUNDS_PER_OWNER || this.rounds.size >= MAX_ROUNDS) {
      const error = new ServiceError(
        'session_limit',
        `Too many tool calls waiting for the client's answer (${mine >= MAX_ROUNDS_PER_OWNER ? `${MAX_ROUNDS_PER_OWNER} for this API key` : `${MAX_ROUNDS} on this server`}); answer or cancel one first.`,
      );
      round.cancel(error);
      throw error;
    }
    this.rounds.set(round.id, round);
  }

  /** The round a retried call names, if it is the caller's and still here. */
  take(requestState: string, owner: string, tool: string): Round<R> {
    const round = this.rounds.get(requestState);
    if (!round || round.owner !== owner || round.tool !== tool)
      throw new ServiceError(
        'invalid_argument',
        'The requestState is unknown or has expired (a call waits at most 2 minutes for its answer). Call the tool again without it.',
      );
    return round;
  }

  /** A round whose result was answered is done with. */
  drop(round: Round<R>): void {
    this.rounds.delete(round.id);
  }

  /** Finished rounds nobody fetched are dropped after KEEP_RESULT_MS; unfinished ones end by their asks' timeouts. */
  private sweep(): void {
    const cutoff = Date.now() - KEEP_RESULT_MS;
    for (const round of this.rounds.values()) if (round.finished && !round.waiting && round.lastCall < cutoff) this.rounds.delete(round.id);
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const round of this.rounds.values()) round.cancel(new ServiceError('browser_unavailable', 'The server is shutting down.'));
    this.rounds.clear();
  }
}
