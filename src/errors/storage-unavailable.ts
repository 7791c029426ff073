/** Recognises the error across copies of the library (the ESM and CommonJS builds, say). */
const BRAND = Symbol.for('openid-oauth-bridge.StorageUnavailableError');

/** Options of {@link StorageUnavailableError}. */
export interface StorageUnavailableErrorOptions {
  /** The driver's error: logged, never sent. */
  cause?: unknown;
  /** What `Retry-After` tells clients, in seconds. Default 5. */
  retryAfterSeconds?: number;
}

/**
 * Thrown by a storage adapter when the database cannot answer now (it is down, unreachable,
 * overloaded, or a timeout expired), as opposed to a bug. The library answers it with 503
 * `temporarily_unavailable` and `Retry-After` instead of 500 `server_error`, and `requireBearer`
 * with 503 instead of 401, so clients keep their tokens and try again later.
 *
 * The SQL adapter throws it for connection failures, timeouts, too many connections, lock
 * timeouts, a server shutting down and `SQLITE_BUSY`. A custom adapter throws it the same way.
 *
 * @example
 * async find(clientId) {
 *   try {
 *     return await redis.hGetAll(`client:${clientId}`);
 *   } catch (err) {
 *     if (isConnectionError(err)) throw new StorageUnavailableError('Redis unreachable', { cause: err });
 *     throw err;
 *   }
 * }
 *
 * @see RFC 6749 section 4.1.2.1 (`temporarily_unavailable`), RFC 9110 section 10.2.3 (`Retry-After`)
 */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  readonly retryAfterSeconds: number;

  constructor(message = 'The storage is unavailable.', options: StorageUnavailableErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const retry = options.retryAfterSeconds ?? 5;
    this.retryAfterSeconds = Number.isInteger(retry) && retry >= 0 ? retry : 5;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for a `StorageUnavailableError` from any copy of the library. */
  static is(err: unknown): err is StorageUnavailableError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
}
