/** What `Storage.prune` takes and answers: kept apart from the stores' contract in types.ts. */
/** Rows removed by one `Storage.prune` call, per kind. */
export interface PruneResult {
  /** Ephemeral entries that had expired. */
  ephemeral: number;
  /** Tokens expired, of a revoked or replaced grant, or of a removed client. */
  tokens: number;
  /** Grants revoked longer ago than the retention. */
  grants: number;
  /**
   * Self-registered clients never used, past their `unusedExpiresAt` (with their grants). Optional:
   * an adapter that leaves it out removes none.
   */
  clients?: number;
  /**
   * Usage rows (day counts and last uses) older than `usageRetentionMs`. Optional: an adapter
   * without `usage` leaves it out.
   */
  usage?: number;
}

/** How `Storage.prune` deletes: its batch size and how long revoked grants are kept. */
export interface PruneOptions {
  /** Rows deleted per statement; smaller batches hold locks for less time. Default 1000. */
  batchSize?: number;
  /** How long a revoked grant is kept (for the CLI and audits), in ms. Default 30 days. */
  revokedGrantRetentionMs?: number;
  /**
   * How long usage is kept, in ms: day counts of days before the day of `now - usageRetentionMs`,
   * and last uses at or before that time, are deleted. Default 400 days.
   */
  usageRetentionMs?: number;
}
