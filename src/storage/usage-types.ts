/**
 * The optional per-app usage store (`Storage.usage`): day counts per client and kind, and when
 * each client, and each account with each client, was last used. The library never writes it on
 * a request: its recorder counts in memory and adds a batch now and then (see docs/operating.md,
 * "Per-app usage").
 */

/**
 * What is counted: `token`, tokens issued for a new grant or a client's own (`token.issued`:
 * code, device, implicit, client credentials); `refresh`, refresh tokens exchanged
 * (`token.refreshed`); `bearer`, access tokens accepted by `requireBearer` and UserInfo.
 */
export type UsageKind = 'token' | 'refresh' | 'bearer';

/** The usage kinds, in the order the library shows them. */
export const USAGE_KINDS: readonly UsageKind[] = ['token', 'refresh', 'bearer'];

/** A count of one client, one UTC day and one kind. */
export interface UsageCount {
  clientId: string;
  /** The UTC day, `YYYY-MM-DD` ({@link usageDay}). */
  day: string;
  kind: UsageKind;
  /** A positive integer. */
  count: number;
}

/** When a client was last used: by anyone (`userId` `null`), or with one account's tokens. */
export interface LastUse {
  clientId: string;
  /** The user whose token it was; `null`: the client's own row, whoever used it. */
  userId: string | null;
  /** Epoch milliseconds. */
  at: number;
}

/** What {@link UsageStore.add} adds: the counts and last uses gathered since the previous batch. */
export interface UsageBatch {
  counts: UsageCount[];
  lastUse: LastUse[];
}

/** Per-app usage, kept by the optional `Storage.usage`. */
export interface UsageStore {
  /**
   * Adds each count to the stored count of its client, day and kind (an absent one counts from
   * 0), and moves each last use forward: the stored `at` becomes the later of the stored and the
   * given one, never earlier. All or nothing: a rejected `add` has changed nothing, so the
   * library adds the same batch again. Instances adding at once lose no count (an upsert that
   * adds, in SQL).
   */
  add(batch: UsageBatch): Promise<void>;
  /**
   * The counts of days at or after `since` (`YYYY-MM-DD`), of one client or of every client,
   * ordered by `clientId`, then `day`, then `kind`.
   */
  counts(filter: { clientId?: string; since: string }): Promise<UsageCount[]>;
  /**
   * The last uses matching every field given (`userId: null`: the clients' own rows; no
   * `userId`: every row), ordered by `clientId`, then `userId` with `null` first.
   */
  lastUse(filter: { clientId?: string; userId?: string | null }): Promise<LastUse[]>;
}

/** The UTC day of an epoch-millisecond time, `YYYY-MM-DD`: how usage counts are keyed. */
export function usageDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * The first day kept `span` milliseconds back from `now` (`Storage.prune`'s `usageRetentionMs`,
 * the CLI's `--days`): the day of `now - span`, no earlier than 1970-01-01, so a retention of a
 * million years keeps everything rather than failing past the dates a `Date` can hold.
 */
export function firstKeptDay(now: number, span: number): string {
  return usageDay(Math.max(0, now - span));
}

/** How long `Storage.prune` keeps usage by default: 400 days, a year and its month to compare. */
export const DEFAULT_USAGE_RETENTION_MS = 400 * 86_400_000;
