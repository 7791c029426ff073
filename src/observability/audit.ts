import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Logger, ServerEvents } from '../events/emitter.js';
import type { ServerEvent, ServerEventType } from '../events/types.js';
import { AUDIT_EVENT_TYPES, auditedTypes, auditLine, droppedLine } from './audit-lines.js';

/*
 * The audit trail (issue 41): the server's security-relevant events as JSON lines, one per event,
 * in a file the host's tools rotate or in a stream the host owns. A listener runs inside the
 * request, so nothing here waits or throws: a line is handed to the stream and the request goes
 * on; an output that cannot keep up or fails loses lines, counted, never the request.
 */

/** What the audit trail needs of the server: its events and its logger. */
export interface AuditSource {
  readonly events: ServerEvents;
  readonly logger: Logger;
}

/** Where the lines go: a file, appended to, or a stream the host owns (`process.stdout`, a socket). */
export type AuditTrailTarget = { file: string } | { stream: Writable };

/** Options of {@link auditTrail}. */
export interface AuditTrailOptions {
  /**
   * The event types written (default {@link AUDIT_EVENT_TYPES}). To add one:
   * `types: [...AUDIT_EVENT_TYPES, 'server.error']`.
   */
  types?: readonly ServerEventType[];
  /**
   * How many bytes may wait for the output before new lines are dropped (default 1 MiB). Dropped
   * lines are counted, and the count written as an `audit.dropped` line once the output catches up.
   */
  maxBufferedBytes?: number;
}

/** A running audit trail. */
export interface AuditTrail {
  /**
   * Opens the file again by its name (logrotate's `postrotate`, on `SIGHUP`): lines go to the new
   * file from now on, those already handed over to the old one. A stream has nothing to reopen.
   */
  reopen(): void;
  /** Stops listening and resolves once every line handed over is written (the file closed). Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BUFFERED = 1024 * 1024;

/**
 * Writes the server's security-relevant events to `target` as JSON lines: `at` (ISO 8601),
 * `type`, `request_id`, `ip`, then who and what in snake case (`user_id`, `client_id`,
 * `grant_id`, `scopes`, `by`, ...), from an allow-list of each event's fields: never a token, code,
 * secret, cookie or a thrown error. A file is opened at once (a wrong path throws here, not at the
 * first login), appended to, created with mode 0600; its rotation is the host's (docs/operating.md).
 *
 * Writing never blocks nor fails a request: past `maxBufferedBytes` waiting, lines are dropped
 * and counted; a write error is logged once through the server's logger, and lines are dropped
 * until {@link AuditTrail.reopen}.
 *
 * @example
 * import { auditTrail } from 'openid-oauth-bridge/observability';
 * const audit = auditTrail(server, { file: '/var/log/auth/audit.jsonl' });
 * process.on('SIGHUP', () => audit.reopen());
 * // on shutdown, after the HTTP server closed: await audit.close();
 *
 * @throws {TypeError} for an event type that does not exist; the file's open error (`ENOENT`,
 * `EACCES`) when it cannot be opened.
 */
export function auditTrail(
  server: AuditSource,
  target: AuditTrailTarget,
  options: AuditTrailOptions = {},
): AuditTrail {
  const types = auditedTypes(options.types ?? AUDIT_EVENT_TYPES);
  const limit = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED;
  const output = 'file' in target ? fileOutput(target.file) : streamOutput(target.stream);
  let dropped = 0;
  // Each said once per run of trouble, not once per line.
  let told = { failed: false, behind: false };
  const say = (level: 'warn' | 'error', message: string, details?: Record<string, unknown>) => {
    try {
      server.logger[level](`audit trail: ${message}`, details);
    } catch {
      // A logger that throws must not break the request either.
    }
  };
  const failed = (error: unknown) => {
    if (told.failed) return;
    told.failed = true;
    say('error', 'cannot write; lines are dropped (and counted) until it is reopened', { error });
  };
  output.watch(failed);

  const handed = inFlight();
  const write = (event: ServerEvent) => {
    const stream = output.current();
    if (!stream.writable) {
      // Ended or destroyed by its owner, or failed: said once, then counted.
      failed(new Error('the output is no longer writable'));
      return void dropped++;
    }
    if (stream.writableLength > limit) {
      if (!told.behind)
        say('warn', `the output is behind by over ${limit} bytes; lines are dropped (and counted)`);
      told.behind = true;
      return void dropped++;
    }
    told.behind = false;
    const count = dropped;
    dropped = 0;
    stream.write(
      `${count > 0 ? `${droppedLine(event.at, count)}\n` : ''}${auditLine(event)}\n`,
      handed.add(),
    );
  };
  const listener = write as (event: unknown) => void;
  for (const type of types) server.events.on(type, listener);

  let closing: Promise<void> | undefined;
  return {
    reopen() {
      if (closing || !output.reopen(failed, (error) => say('error', 'cannot reopen; writing on', { error })))
        return;
      told = { failed: false, behind: false };
    },
    close() {
      if (!closing) {
        for (const type of types) server.events.off(type, listener);
        closing = handed.settled().then(() => {
          // Lines dropped since the last one written are said at the end, not lost with it.
          const stream = output.current();
          if (dropped > 0 && stream.writable) {
            stream.write(`${droppedLine(Date.now(), dropped)}\n`, handed.add());
            dropped = 0;
          }
          return handed.settled().then(() => output.close());
        });
      }
      return closing;
    },
  };
}

/**
 * The lines handed to the output and not yet written (each write's callback, called once it is
 * written or failed): what {@link AuditTrail.close} waits for, whatever the output buffers.
 */
function inFlight() {
  let count = 0;
  let waiting: (() => void) | undefined;
  return {
    add(): () => void {
      count++;
      return () => {
        if (--count === 0) waiting?.();
      };
    },
    settled(): Promise<void> {
      return count === 0 ? Promise.resolve() : new Promise((resolve) => (waiting = resolve));
    },
  };
}

/** Where lines go, and how it is reopened and closed. */
interface Output {
  current(): Writable;
  /** Reports the errors of the current stream, and of each reopened one, to `failed`. */
  watch(failed: (error: unknown) => void): void;
  /** Whether a new stream replaced the current one. */
  reopen(failed: (error: unknown) => void, cannot: (error: unknown) => void): boolean;
  close(): Promise<void>;
}

function fileOutput(path: string): Output {
  const open = (): WriteStream =>
    // Opened here, synchronously, so that a wrong path or a missing permission throws to the
    // caller; 0600 applies when the file is created (an existing file keeps its mode).
    createWriteStream(path, { fd: openSync(path, 'a', 0o600), flags: 'a' });
  let stream = open();
  const ending: Promise<void>[] = [];
  return {
    current: () => stream,
    watch: (failed) => void stream.on('error', failed),
    reopen(failed, cannot) {
      let next: WriteStream;
      try {
        next = open();
      } catch (error) {
        cannot(error);
        return false;
      }
      next.on('error', failed);
      // The lines handed to the old stream go to the file it has open: the one logrotate renamed.
      ending.push(endOf(stream));
      stream = next;
      return true;
    },
    async close() {
      ending.push(endOf(stream));
      await Promise.all(ending);
    },
  };
}

/** Ends a file's stream; resolves once its lines are written and the file closed (or it failed). */
function endOf(stream: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.closed) return resolve();
    stream.once('close', () => resolve());
    stream.end();
  });
}

function streamOutput(stream: Writable): Output {
  let failed: ((error: unknown) => void) | undefined;
  return {
    current: () => stream,
    watch(onError) {
      failed = onError;
      stream.on('error', onError);
    },
    reopen: () => false,
    // The stream is the host's: it is not ended; its lines were written when close() comes here.
    async close() {
      if (failed) stream.off('error', failed);
    },
  };
}
