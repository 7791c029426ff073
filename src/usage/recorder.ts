import type { Logger, ServerEvents } from '../events/emitter.js';
import type { LastUse, UsageBatch, UsageCount, UsageKind, UsageStore } from '../storage/types.js';
import { USAGE_KINDS, usageDay } from '../storage/usage-types.js';

/** What the recorder needs: the store it writes to, the server's clock, logger and events. */
export interface UsageRecorderDeps {
  store: UsageStore;
  clock: () => number;
  logger: () => Logger;
  /** Where token issues and refreshes are heard (`token.issued`, `token.refreshed`). */
  events: ServerEvents;
  /** Seconds counts are held before they are written. */
  flushSeconds: number;
  /** Clients and accounts held before a write comes early; four times this while writes fail. */
  maxPending: number;
}

/**
 * Per-app usage as the server counts it: in memory, written in batches, so that a bearer request
 * costs a few map updates and never a storage write. `server.usage`, when the storage has a
 * `usage` store and the `usage` option is not `false`.
 */
export interface UsageRecorder {
  /**
   * Counts one use of `clientId` now: `userId` is the member whose token it was, `null` for a
   * client's own token. Synchronous; never throws.
   */
  record(kind: UsageKind, clientId: string, userId: string | null, at: number): void;
  /** Writes what is counted now (after a write in flight, if any); resolves once it is written or has failed. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left: `closeGracefully(http, { server })` calls it last. */
  close(): Promise<void>;
}

/** What is held for one client until the next write. */
interface Held {
  /** Per UTC day, a count per kind. */
  days: Map<string, Record<UsageKind, number>>;
  /** The client's latest use. */
  at: number;
  /** Each member's latest use with this client. */
  accounts: Map<string, number>;
}

/**
 * The recorder of {@link UsageRecorder}: counts into a map of clients, writes it every
 * `flushSeconds` (a timer started by the first count after a write, unreferenced, so it keeps no
 * process alive), or early at `maxPending` clients and accounts. A failed write is logged and its
 * counts are put back for the next one; while writes fail, up to four times `maxPending` are
 * held, and the counts of clients and accounts beyond it are dropped and said in the log.
 */
export function usageRecorder(deps: UsageRecorderDeps): UsageRecorder {
  const { store, flushSeconds, maxPending } = deps;
  const ceiling = maxPending * 4;
  let held = new Map<string, Held>();
  /** Clients plus accounts in `held`. */
  let size = 0;
  let dropped = 0;
  let failing = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flight: Promise<void> | undefined;
  // The day of the last count, so that a count makes no Date while the day lasts.
  let day = { from: 0, to: 0, name: '' };

  const dayOf = (at: number): string => {
    if (at < day.from || at >= day.to) {
      const from = at - (at % 86_400_000);
      day = { from, to: from + 86_400_000, name: usageDay(at) };
    }
    return day.name;
  };

  /** The client's entry, its last use moved to `at`; `undefined` when no more can be held. */
  const entryOf = (clientId: string, at: number): Held | undefined => {
    let entry = held.get(clientId);
    if (entry === undefined) {
      if (size >= ceiling) return undefined;
      entry = { days: new Map(), at, accounts: new Map() };
      held.set(clientId, entry);
      size++;
    } else if (at > entry.at) {
      entry.at = at;
    }
    return entry;
  };
  const countIn = (entry: Held, dayName: string, kind: UsageKind, count: number) => {
    let counts = entry.days.get(dayName);
    if (counts === undefined) entry.days.set(dayName, (counts = { token: 0, refresh: 0, bearer: 0 }));
    counts[kind] += count;
  };
  const usedBy = (entry: Held, userId: string, at: number) => {
    const known = entry.accounts.get(userId);
    if (known === undefined) {
      if (size >= ceiling) return;
      size++;
    } else if (known >= at) {
      return;
    }
    entry.accounts.set(userId, at);
  };

  /** Puts a failed batch back under what was counted meanwhile: the next write adds them all. */
  const putBack = (taken: Map<string, Held>) => {
    for (const [clientId, back] of taken) {
      const entry = entryOf(clientId, back.at);
      for (const [dayName, counts] of back.days) {
        for (const kind of USAGE_KINDS) {
          if (entry === undefined) dropped += counts[kind];
          else if (counts[kind] > 0) countIn(entry, dayName, kind, counts[kind]);
        }
      }
      if (entry !== undefined) for (const [userId, at] of back.accounts) usedBy(entry, userId, at);
    }
  };

  /** The host's logger, which must not turn a failed write into a crash by throwing itself. */
  const warn = (message: string, details?: Record<string, unknown>) => {
    try {
      deps.logger().warn(message, details);
    } catch {
      // Nothing else to tell it with.
    }
  };

  const schedule = () => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void recorder.flush();
    }, flushSeconds * 1000);
    timer.unref?.();
  };

  const recorder: UsageRecorder = {
    record(kind, clientId, userId, at) {
      const entry = entryOf(clientId, at);
      if (entry === undefined) {
        dropped++;
      } else {
        countIn(entry, dayOf(at), kind, 1);
        if (userId !== null) usedBy(entry, userId, at);
      }
      schedule();
      if (size >= maxPending && flight === undefined && !failing) void recorder.flush();
    },

    async flush() {
      while (flight !== undefined) await flight;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (held.size === 0) return;
      const taken = held;
      held = new Map();
      size = 0;
      // Through a promise whatever the store does: a custom `add` that throws at once, or
      // answers without a promise, is a failed write like any other, never a rejection that
      // nobody handles (the timer's and the early flush's callers do not wait).
      flight = Promise.resolve()
        .then(() => store.add(batchOf(taken)))
        .then(
          () => {
            failing = false;
            if (dropped > 0) {
              warn(
                `usage: ${dropped} uses were not counted: the counts held while writes failed were at their limit (usage.maxPending × 4)`,
              );
              dropped = 0;
            }
          },
          (error: unknown) => {
            failing = true;
            putBack(taken);
            warn(
              `usage: writing the counts of ${taken.size} clients failed; they are kept for the next write in ${flushSeconds} s`,
              { error },
            );
            schedule();
          },
        );
      try {
        await flight;
      } finally {
        flight = undefined;
      }
    },

    async close() {
      unsubscribe();
      await recorder.flush();
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (held.size > 0) {
        warn(`usage: the counts of ${held.size} clients could not be written before the server closed`);
      }
    },
  };

  const stops = [
    deps.events.on('token.issued', (event) =>
      recorder.record(
        'token',
        event.clientId,
        event.grantType === 'client_credentials' ? null : event.userId,
        event.at,
      ),
    ),
    deps.events.on('token.refreshed', (event) =>
      recorder.record('refresh', event.clientId, event.userId, event.at),
    ),
  ];
  const unsubscribe = () => stops.forEach((stop) => stop());
  return recorder;
}

/** The batch of what is held: a count per client, day and kind, and the latest uses. */
function batchOf(taken: Map<string, Held>): UsageBatch {
  const counts: UsageCount[] = [];
  const lastUse: LastUse[] = [];
  for (const [clientId, entry] of taken) {
    for (const [day, perKind] of entry.days) {
      for (const kind of USAGE_KINDS) {
        if (perKind[kind] > 0) counts.push({ clientId, day, kind, count: perKind[kind] });
      }
    }
    lastUse.push({ clientId, userId: null, at: entry.at });
    for (const [userId, at] of entry.accounts) lastUse.push({ clientId, userId, at });
  }
  return { counts, lastUse };
}
