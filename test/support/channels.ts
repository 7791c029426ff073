/** Subscribing to the library's tracing channels in a test, as an APM tool would. */
import { tracingChannel } from 'node:diagnostics_channel';

/** One message a subscriber saw: which of the five, and a copy of the context then. */
export type Seen = { event: string; context: Record<string, unknown> };

/**
 * Subscribes to `openid-oauth-bridge:<name>` and records every message with a copy of its
 * context; `stop` unsubscribes.
 */
export function subscribe(name: string): { seen: Seen[]; stop: () => void } {
  const seen: Seen[] = [];
  const record = (event: string) => (context: object) =>
    void seen.push({ event, context: { ...(context as Record<string, unknown>) } });
  const handlers = {
    start: record('start'),
    end: record('end'),
    asyncStart: record('asyncStart'),
    asyncEnd: record('asyncEnd'),
    error: record('error'),
  };
  const channel = tracingChannel(`openid-oauth-bridge:${name}`);
  channel.subscribe(handlers);
  return { seen, stop: () => channel.unsubscribe(handlers) };
}
