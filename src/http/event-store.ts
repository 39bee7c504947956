import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Events kept per MCP session for resumption; older ones are dropped, and a resume from before them replays nothing. */
const MAX_EVENTS = 1_000;

/**
 * The recent messages of one MCP session's SSE streams, so a client whose stream dropped (say, during a long
 * agent_execute) can reconnect with Last-Event-ID and receive what it missed.
 */
export class MemoryEventStore implements EventStore {
  private readonly events = new Map<EventId, { streamId: StreamId; message: JSONRPCMessage }>();
  private seq = 0;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = `${++this.seq}_${streamId}`;
    this.events.set(id, { streamId, message });
    if (this.events.size > MAX_EVENTS) this.events.delete(this.events.keys().next().value!);
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const last = this.events.get(lastEventId);
    if (!last) return '';
    let after = false;
    for (const [id, event] of this.events) {
      if (id === lastEventId) after = true;
      // Priming events carry an empty message and are not replayed.
      else if (after && event.streamId === last.streamId && Object.keys(event.message).length > 0) await send(id, event.message);
    }
    return last.streamId;
  }
}
