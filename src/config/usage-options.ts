/** {@link AuthorizationServerOptions.usage}: how the per-app usage is written. */
export interface UsageOptions {
  /**
   * Seconds the counts are held in memory before they are written (one `storage.usage.add` for
   * every client and account counted meanwhile), 1 to 3600. Default `60`.
   */
  flushSeconds?: number;
  /**
   * Clients and accounts counted in memory before a write comes early, 10 to 1000000. Default
   * `10000`. While writes fail, counts are kept up to four times this many; past it, those of
   * clients and accounts not yet held are dropped, and the log says how many.
   */
  maxPending?: number;
}
