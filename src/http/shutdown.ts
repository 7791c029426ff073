import type { Server } from 'node:http';

/** Options of {@link closeGracefully}. */
export interface CloseGracefullyOptions {
  /**
   * Closed once the last request has finished: the storage adapter (`connectStorage(...)`), or
   * anything else with a `close()` to run last.
   */
  storage?: { close(): Promise<void> | void };
  /**
   * The authorization server, whose per-app usage counts held in memory are written once the
   * last request has finished, before `storage` is closed.
   */
  server?: { readonly usage?: { close(): Promise<void> } };
  /** Requests still running after this long are cut off, in ms. Default 10000. */
  timeoutMs?: number;
}

/** What {@link closeGracefully} resolves. */
export interface CloseGracefullyResult {
  /** True when requests were still running at `timeoutMs` and their connections were cut. */
  timedOut: boolean;
}

/** How often connections that became idle (a keep-alive after its last response) are closed. */
const IDLE_SWEEP_MS = 25;

/**
 * Shuts an HTTP server down without cutting off a request: stops accepting connections, lets
 * every request in flight finish (closing each keep-alive connection once it is idle), then
 * writes `server`'s per-app usage counts and closes `storage` (the connection pool or the SQLite
 * file). After `timeoutMs` the remaining
 * connections are cut. Nothing it starts outlives it, so the process can exit on its own.
 *
 * Call it on SIGTERM, after the load balancer stopped sending traffic (see docs/operating.md,
 * "Operating in production").
 *
 * @example
 * const http = app.listen(3000);
 * process.once('SIGTERM', () => {
 *   void closeGracefully(http, { server, storage, timeoutMs: 10_000 });
 * });
 */
export async function closeGracefully(
  http: Server,
  options: CloseGracefullyOptions = {},
): Promise<CloseGracefullyResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let timedOut = false;
  // A request arriving on a connection kept alive from before is still served, then the
  // connection is closed rather than kept for more.
  const closeAfterResponse = (_req: unknown, res: { setHeader(name: string, value: string): void }) =>
    res.setHeader('Connection', 'close');
  http.on('request', closeAfterResponse);
  // Resolves once every connection has ended (at once, with an error, if it was not listening).
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  const sweep = setInterval(() => http.closeIdleConnections(), IDLE_SWEEP_MS);
  const deadline = setTimeout(() => {
    timedOut = true;
    http.closeAllConnections();
  }, timeoutMs);
  try {
    http.closeIdleConnections();
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
    http.off('request', closeAfterResponse);
  }
  await options.server?.usage?.close();
  await options.storage?.close();
  return { timedOut };
}
