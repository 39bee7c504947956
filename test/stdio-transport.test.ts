import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { LineStdioServerTransport } from '../src/mcp/stdio-transport.js';

const LIMIT = 1024 * 1024;

function open() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new LineStdioServerTransport(stdin, stdout, LIMIT);
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (message) => received.push(message);
  transport.onerror = (error) => errors.push(error);
  let written = '';
  stdout.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  return {
    stdin,
    transport,
    received,
    errors,
    answers: () =>
      written
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
  };
}

/** Writes `text` in chunks of `size` bytes, as a pipe delivers a long line. */
function writeInChunks(stdin: PassThrough, text: string, size = 64 * 1024): void {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) stdin.write(bytes.subarray(at, at + size));
}

const request = (id: number, payload = '') =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'act', arguments: { data: payload } } });

describe('the stdio transport', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it('reads messages split over many chunks and several messages in one chunk, in order', async () => {
    const t = open();
    close = () => t.transport.close();
    await t.transport.start();
    writeInChunks(t.stdin, request(1, 'x'.repeat(900_000)) + '\n');
    t.stdin.write(request(2) + '\r\n' + request(3) + '\n' + request(4));
    t.stdin.write('\n');
    await expect.poll(() => t.received.length).toBe(4);
    expect(t.received.map((message) => (message as { id: number }).id)).toEqual([1, 2, 3, 4]);
    expect((t.received[0] as unknown as { params: { arguments: { data: string } } }).params.arguments.data).toHaveLength(900_000);
    expect(t.errors).toEqual([]);
  });

  it('answers a message over the limit with an error carrying its id, and goes on reading', async () => {
    const t = open();
    close = () => t.transport.close();
    await t.transport.start();
    // The SDK client writes the id last; many other clients write it first.
    writeInChunks(t.stdin, request(7, 'y'.repeat(LIMIT)) + '\n');
    const idFirst = `{"jsonrpc":"2.0","id":"big-8","method":"tools/call","params":{"arguments":{"id":1,"data":"${'z'.repeat(LIMIT)}"}}}`;
    writeInChunks(t.stdin, idFirst + '\n');
    t.stdin.write(request(9) + '\n');
    await expect.poll(() => t.received.length).toBe(1);
    expect((t.received[0] as { id: number }).id).toBe(9);
    await expect.poll(() => t.answers().length).toBe(2);
    expect(t.answers()).toEqual([
      { jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringMatching(/over the 1048576-byte limit/) } },
      { jsonrpc: '2.0', id: 'big-8', error: { code: -32600, message: expect.stringMatching(/over the 1048576-byte limit/) } },
    ]);
  });

  it('reports a line that is not JSON-RPC and goes on reading', async () => {
    const t = open();
    close = () => t.transport.close();
    await t.transport.start();
    t.stdin.write('not json\n' + request(5) + '\n');
    await expect.poll(() => t.received.length).toBe(1);
    expect(t.errors).toHaveLength(1);
  });
});
