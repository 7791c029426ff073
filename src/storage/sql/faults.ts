import { StorageUnavailableError } from '../../errors/storage-unavailable.js';
import type { Storage } from '../types.js';

/**
 * PostgreSQL SQLSTATEs that mean "not now" rather than "wrong": the server is unreachable, shutting
 * down or out of resources, or a timeout the operator set expired. Class 08 (connection
 * exception) and class 53 (insufficient resources, `53300` too many connections) are matched
 * whole.
 */
const POSTGRES_OUTAGES: Readonly<Record<string, number>> = {
  '57P01': 5, // admin_shutdown: terminated by pg_terminate_backend or a fast shutdown
  '57P02': 5, // crash_shutdown
  '57P03': 5, // cannot_connect_now: starting up or in recovery
  '57P05': 1, // idle_session_timeout
  '25P03': 1, // idle_in_transaction_session_timeout
  '57014': 1, // query_canceled: statement_timeout
  '55P03': 1, // lock_not_available: lock_timeout
  '40001': 1, // serialization_failure
  '40P01': 1, // deadlock_detected
  '58030': 5, // io_error
};

/** Errors of Node's sockets and DNS while reaching the database. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/**
 * Errors `pg` and `better-sqlite3` raise without a code: the pool's connection timeout, a
 * connection that died under a query, and a handle already closed (during a shutdown).
 */
const DRIVER_MESSAGES =
  /^(timeout exceeded when trying to connect|Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Cannot use a pool after calling end on the pool|The database connection is not open)$/;

/**
 * SQLite result codes (better-sqlite3 `SqliteError.code`, extended codes included): another
 * process holds the write lock past `busy_timeout`, or the file cannot be read or written.
 */
const SQLITE_OUTAGE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)(_|$)/;

/**
 * Whether a driver error means the database is unavailable (down, unreachable, overloaded, or a
 * timeout expired), and for how long a client should wait: seconds for `Retry-After`, or
 * `undefined` for any other error (a bug, a constraint violated), which stays a 500.
 */
export function sqlOutageRetryAfter(err: unknown, depth = 0): number | undefined {
  if (typeof err !== 'object' || err === null || depth > 4) return undefined;
  const { code, message, errors, cause } = err as {
    code?: unknown;
    message?: unknown;
    errors?: unknown;
    cause?: unknown;
  };
  if (typeof code === 'string') {
    if (code.length === 5 && (code.startsWith('08') || code.startsWith('53'))) return 5;
    if (Object.hasOwn(POSTGRES_OUTAGES, code)) return POSTGRES_OUTAGES[code];
    if (NETWORK_CODES.has(code)) return 5;
    if (SQLITE_OUTAGE.test(code))
      return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? 1 : 5;
  }
  if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return 5;
  // Node's connection attempts to several addresses fail with an AggregateError.
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const retry = sqlOutageRetryAfter(inner, depth + 1);
      if (retry !== undefined) return retry;
    }
  }
  return sqlOutageRetryAfter(cause, depth + 1);
}

/** `err` as a {@link StorageUnavailableError} when it is an outage, else unchanged. */
export function classifySqlError(err: unknown): unknown {
  if (StorageUnavailableError.is(err)) return err;
  const retryAfterSeconds = sqlOutageRetryAfter(err);
  if (retryAfterSeconds === undefined) return err;
  const detail = (err as { code?: unknown }).code ?? (err as Error).message;
  return new StorageUnavailableError(`The database is unavailable (${String(detail)}).`, {
    cause: err,
    retryAfterSeconds,
  });
}

/** Methods left as they are: their callers want the driver's own error. */
const UNGUARDED = new Set(['migrate', 'pendingMigrations', 'close']);

/**
 * The adapter with every storage method's outages rethrown as {@link StorageUnavailableError}:
 * every method of every store (`ephemeral.take`, `clients.update`, `tokens.find`, ...), found by
 * walking the adapter's objects so that a method added later is guarded too, `prune`, and the
 * reader's `read`.
 */
export function guardSqlFaults<T extends object>(storage: T): T {
  const guard =
    (fn: (...args: unknown[]) => unknown, self: object) =>
    async (...args: unknown[]) => {
      try {
        return await fn.apply(self, args);
      } catch (err) {
        throw classifySqlError(err);
      }
    };
  const guarded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(storage)) {
    if (key === 'reader') continue;
    if (typeof value === 'function' && !UNGUARDED.has(key)) {
      guarded[key] = guard(value as (...args: unknown[]) => unknown, storage);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const domain: Record<string, unknown> = {};
      for (const [name, method] of Object.entries(value)) {
        domain[name] =
          typeof method === 'function' ? guard(method as (...args: unknown[]) => unknown, value) : method;
      }
      guarded[key] = domain;
    } else {
      guarded[key] = value;
    }
  }
  // The reader reads the guarded stores: they are the storage's own (see Storage.reader).
  const { reader } = storage as Storage;
  if (reader !== undefined) {
    const { ephemeral, clients, tokens, grants } = guarded as unknown as Storage;
    guarded.reader = {
      stores: { ephemeral, clients, tokens, grants },
      read: guard(reader.read as (...args: unknown[]) => unknown, reader),
    };
  }
  return guarded as T;
}
