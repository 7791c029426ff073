import type { Request, Response } from 'express';
import { DISPATCH, LISTENED, type ServerEvents } from './emitter.js';
import type { ServerEvent, ServerEventBase, ServerEventInput, ServerEventType } from './types.js';

/**
 * Reports an event to the server's listeners. Internal to the library: endpoints call it after
 * the fact; it never throws, whatever the listeners do.
 *
 * @example
 * emit(server, { type: 'consent.given', userId, clientId, scopes, ...eventContext(req) });
 */
export function emit(server: EventTarget, event: ServerEventInput): void {
  if (!server.events[LISTENED](event.type)) return;
  server.events[DISPATCH]({ ...event, at: server.clock() } as ServerEvent);
}

/**
 * Whether an event of `type` would reach a listener: on a hot path, check it before building the
 * event (its {@link eventContext} reads `req.ip`, which parses forwarding headers).
 *
 * @example
 * if (listened(server, 'token.issued')) emit(server, { type: 'token.issued', ...fields, ...context() });
 */
export function listened(server: EventTarget, type: ServerEventType): boolean {
  return server.events[LISTENED](type);
}

/** Where events go: the server's listeners, stamped with its clock. */
export interface EventTarget {
  readonly events: ServerEvents;
  readonly clock: () => number;
}

/** The fields of an event that come from the request. */
export type EventContext = Omit<ServerEventBase, 'at'>;

/**
 * The fields of an event that come from the request: its address, and its id. The id is the one
 * the endpoint's pipeline chose when the request came in (`X-Request-Id` on the response, see
 * src/http/request-id.ts), read back here so that every event of the request carries it without
 * each call site passing it. The one place to add more.
 */
export function eventContext(req: Request | undefined): EventContext {
  if (req === undefined) return {};
  const ip = req.ip;
  // Express links the response to its request; a bare request (a host's own call) has none.
  const requestId = (req.res as Response | undefined)?.getHeader('X-Request-Id');
  return {
    ...(ip === undefined ? {} : { ip }),
    ...(typeof requestId === 'string' ? { requestId } : {}),
  };
}
