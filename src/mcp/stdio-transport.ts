import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** JSON-RPC "Invalid Request": the answer to a message over the size limit. */
const INVALID_REQUEST = -32600;
/** Bytes kept from each end of a message over the limit, to find its id. */
const EDGE_BYTES = 256;

/**
 * MCP over stdin/stdout, one JSON-RPC message a line, read in time linear in the message's size. The SDK's
 * StdioServerTransport joins every chunk onto the buffer read so far and searches it from the start, so a 34 MiB
 * upload (act's largest) took about 40 s to arrive; here chunks are kept until a newline ends the message.
 *
 * A message over `maxMessageBytes` is not kept: it is skipped to its newline and answered with an Invalid Request
 * error carrying its id (found at either end of the line), and the connection stays open.
 */
export class LineStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Set while skipping a message over the limit: its first bytes and its last bytes so far. */
  private skipped?: { head: Buffer; tail: Buffer; bytes: number };
  private started = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream,
    private readonly stdout: NodeJS.WritableStream,
    private readonly maxMessageBytes: number,
  ) {}

  private readonly onData = (chunk: Buffer): void => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, newline));
      this.lineEnded();
      start = newline + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  };

  private readonly onError = (error: Error): void => this.onerror?.(error);

  async start(): Promise<void> {
    if (this.started) throw new Error('The stdio transport is already started.');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.chunks = [];
    this.size = 0;
    this.skipped = undefined;
    this.onclose?.();
  }

  /** Adds part of the current line, or switches to skipping it once it is over the limit. */
  private take(part: Buffer): void {
    if (this.skipped) {
      this.skipped.bytes += part.length;
      this.skipped.tail = Buffer.concat([this.skipped.tail, part]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.size + part.length <= this.maxMessageBytes) {
      // A copy: the stream may reuse the chunk's memory.
      this.chunks.push(Buffer.from(part));
      this.size += part.length;
      return;
    }
    const line = Buffer.concat([...this.chunks, part]);
    this.skipped = { head: line.subarray(0, EDGE_BYTES), tail: line.subarray(-EDGE_BYTES), bytes: line.length };
    this.chunks = [];
    this.size = 0;
  }

  private lineEnded(): void {
    if (this.skipped) {
      const { head, tail, bytes } = this.skipped;
      this.skipped = undefined;
      this.refuse(head, tail, bytes);
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (!line.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.onmessage?.(message);
  }

  private refuse(head: Buffer, tail: Buffer, bytes: number): void {
    const text = `The message of ${bytes} bytes is over the ${this.maxMessageBytes}-byte limit of this server.`;
    this.onerror?.(new Error(text));
    const id = requestId(head.toString('utf8'), tail.toString('utf8'));
    if (id !== undefined) void this.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: text } });
  }
}

/** The id of a JSON-RPC request from the ends of its line: first after "jsonrpc" (as most clients write), or last. */
function requestId(head: string, tail: string): string | number | undefined {
  const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")`;
  const found =
    new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}`).exec(head) ?? new RegExp(`${ID}\\s*}\\s*$`).exec(tail);
  return found ? (JSON.parse(found[1]!) as string | number) : undefined;
}
