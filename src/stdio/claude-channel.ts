/**
 * Claude Code's channel, opt-in (`SESS_MCP_CLAUDE_CHANNEL=1`): the server declares the
 * `claude/channel` capability and this sink sends each event to the connected client as
 * `notifications/claude/channel`, naming the handle and the call to make, never a value or a link.
 * Claude Code shows it to its model as a channel message (launched with
 * `--dangerously-load-development-channels server:<name>`; it refuses channels under API-key
 * authentication).
 *
 * It only writes the notification; the delivery loop decides when, and retries while no client is
 * connected.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import type { EventSink, WakeEvent } from '../index.js';

/** The sink name channel deliveries are kept under in the outbox. */
export const CLAUDE_CHANNEL_SINK = 'claudeChannel';

/** The channel notification's method. */
export const CLAUDE_CHANNEL_METHOD = 'notifications/claude/channel';

/** What the model reads: the event and the one call to make (handles are plain store keys). */
export function channelText(event: WakeEvent): string {
  const call = `sess_response ${JSON.stringify({ handle: event.handle, revision: event.revision })}`;
  return `Sess: interaction ${event.handle} is ${event.type}. Call ${call} now and act only on its verified result.`;
}

/** The sink; `serverOf` gives the server of the connected client, if any. */
export function createClaudeChannelSink(serverOf: () => McpServer | undefined): EventSink {
  return {
    name: CLAUDE_CHANNEL_SINK,
    async deliver(event) {
      const server = serverOf();
      if (server === undefined || !server.isConnected()) return { kind: 'retry', reason: 'not_connected' };
      await server.server.notification({
        method: CLAUDE_CHANNEL_METHOD,
        params: {
          content: channelText(event),
          meta: { source: 'sess', event: event.type, handle: event.handle, event_id: event.eventId },
        },
      });
      return { kind: 'delivered' };
    },
  };
}
