import type { Storage } from '../storage/types.js';
import { usageDay, type UsageKind } from '../storage/usage-types.js';

/** What the developer page shows of one application's usage. */
export interface UsageSummary {
  /** Its last use, by anyone (epoch ms); absent: none written yet. */
  lastUsedAt?: number;
  /** Its counts over the last 30 days, today included. */
  last30Days: Record<UsageKind, number>;
}

/**
 * A client's last use and its 30-day counts, as written by the recorder (up to
 * `usage.flushSeconds` behind); `undefined` when the storage keeps no usage.
 */
export async function usageSummary(
  storage: Storage,
  clientId: string,
  now: number,
): Promise<UsageSummary | undefined> {
  const { usage } = storage;
  if (usage === undefined) return undefined;
  const since = usageDay(now - 29 * 86_400_000);
  const [counts, [own]] = await Promise.all([
    usage.counts({ clientId, since }),
    usage.lastUse({ clientId, userId: null }),
  ]);
  const last30Days = { token: 0, refresh: 0, bearer: 0 };
  for (const { kind, count } of counts) last30Days[kind] += count;
  return own === undefined ? { last30Days } : { lastUsedAt: own.at, last30Days };
}

/** When each client last used `userId`'s tokens (epoch ms), by client id; empty without usage. */
export async function lastUsesOf(storage: Storage, userId: string): Promise<Map<string, number>> {
  const uses = (await storage.usage?.lastUse({ userId })) ?? [];
  return new Map(uses.map((use) => [use.clientId, use.at]));
}
