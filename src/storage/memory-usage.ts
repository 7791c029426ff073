import { firstKeptDay, type LastUse, type UsageCount, type UsageStore } from './usage-types.js';

/** The memory adapter's {@link UsageStore}, with the prune `memoryStorage().prune` runs. */
export function memoryUsageStore(): UsageStore & { prune(now: number, retentionMs: number): number } {
  /** (clientId, day, kind) → count; (clientId, userId or '') → last use. */
  const counts = new Map<string, UsageCount>();
  const lastUses = new Map<string, LastUse>();
  const key = (...parts: string[]) => parts.map((part) => `${part.length}:${part}`).join('');

  return {
    async add(batch) {
      for (const count of batch.counts) {
        const k = key(count.clientId, count.day, count.kind);
        const stored = counts.get(k);
        counts.set(k, { ...count, count: (stored?.count ?? 0) + count.count });
      }
      for (const use of batch.lastUse) {
        const k = key(use.clientId, use.userId ?? '');
        const stored = lastUses.get(k);
        if (!stored || stored.at < use.at) lastUses.set(k, { ...use });
      }
    },
    async counts(filter) {
      return [...counts.values()]
        .filter(
          (c) => c.day >= filter.since && (filter.clientId === undefined || c.clientId === filter.clientId),
        )
        .sort((a, b) => compare(a.clientId, b.clientId) || compare(a.day, b.day) || compare(a.kind, b.kind))
        .map((c) => ({ ...c }));
    },
    async lastUse(filter) {
      return [...lastUses.values()]
        .filter(
          (u) =>
            (filter.clientId === undefined || u.clientId === filter.clientId) &&
            (filter.userId === undefined || u.userId === filter.userId),
        )
        .sort((a, b) => compare(a.clientId, b.clientId) || compare(a.userId ?? '', b.userId ?? ''))
        .map((u) => ({ ...u }));
    },
    prune(now, retentionMs) {
      const firstDay = firstKeptDay(now, retentionMs);
      let removed = 0;
      for (const [k, count] of counts) {
        if (count.day < firstDay) removed += Number(counts.delete(k));
      }
      for (const [k, use] of lastUses) {
        if (use.at <= now - retentionMs) removed += Number(lastUses.delete(k));
      }
      return removed;
    },
  };
}

/** Code-unit order, as SQL's `text` compares under the C collation and as the other stores sort. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
