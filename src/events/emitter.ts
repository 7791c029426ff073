import type { ServerEvent, ServerEventListener, ServerEventType } from './types.js';

/**
 * Only the library dispatches; the symbol is not exported from the package. A registered symbol
 * (`Symbol.for`), so that a host that loads both the ESM and the CommonJS build (a server built
 * by one copy, a router by the other) still reaches the listeners: a module-level `Symbol()` is a
 * different key in each copy.
 *
 * @internal
 */
export const DISPATCH: unique symbol = Symbol.for('openid-oauth-bridge.events.dispatch');
/** Whether an event of a type has listeners; internal like {@link DISPATCH}. @internal */
export const LISTENED: unique symbol = Symbol.for('openid-oauth-bridge.events.listened');

/** Where the library logs: `console`, pino, winston... any object with these two methods. */
export interface Logger {
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

type AnyListener = (event: ServerEvent) => void | Promise<void>;

/**
 * The events of one authorization server (`server.events`): subscribe to one type, or to `'*'`
 * for all of them (an audit log).
 *
 * Not a `node:events` `EventEmitter`, on purpose: there a throwing listener throws out of
 * `emit()` into the request and skips the listeners after it, and an async listener's rejection
 * goes unhandled. Here each listener is isolated: what it throws or rejects with is logged
 * through the server's logger, and the request and the other listeners carry on.
 *
 * @example
 * server.events.on('token.issued', (event) => metrics.increment('tokens', { client: event.clientId }));
 * const stop = server.events.on('*', (event) => auditLog.write(event));
 * stop(); // unsubscribes
 */
export class ServerEvents {
  readonly #listeners = new Map<ServerEventType | '*', Set<AnyListener>>();
  readonly #logger: () => Logger;

  /** @internal The server builds it; `logger` reports failing listeners. */
  constructor(logger: () => Logger) {
    this.#logger = logger;
  }

  /** Calls `listener` for every event of `type` (`'*'`: every event). Returns an unsubscriber. */
  on<T extends ServerEventType | '*'>(type: T, listener: ServerEventListener<T>): () => void {
    if (typeof listener !== 'function')
      throw new TypeError('openid-oauth-bridge: a listener must be a function');
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(listener as AnyListener);
    return () => this.off(type, listener);
  }

  /** Removes a listener added with {@link ServerEvents.on}. */
  off<T extends ServerEventType | '*'>(type: T, listener: ServerEventListener<T>): void {
    this.#listeners.get(type)?.delete(listener as AnyListener);
  }

  /** How many listeners `type` has (not counting `'*'` listeners unless `type` is `'*'`). */
  listenerCount(type: ServerEventType | '*'): number {
    return this.#listeners.get(type)?.size ?? 0;
  }

  /** @internal Whether an event of `type` would reach a listener (of `type`, or of `'*'`). */
  [LISTENED](type: ServerEventType): boolean {
    return (this.#listeners.get(type)?.size ?? 0) > 0 || (this.#listeners.get('*')?.size ?? 0) > 0;
  }

  /** @internal Calls the listeners of the event's type, then the `'*'` listeners, each isolated. */
  [DISPATCH](event: ServerEvent): void {
    const listeners = [...(this.#listeners.get(event.type) ?? []), ...(this.#listeners.get('*') ?? [])];
    for (const listener of listeners) {
      try {
        const result = listener(event);
        if (result && typeof (result as Promise<void>).then === 'function') {
          (result as Promise<void>).then(undefined, (error: unknown) => this.#failed(event, error));
        }
      } catch (error) {
        this.#failed(event, error);
      }
    }
  }

  #failed(event: ServerEvent, error: unknown): void {
    try {
      this.#logger().error(`event listener failed (${event.type})`, { error });
    } catch {
      // A logger that throws must not break the request either.
    }
  }
}
