import { InvalidArgumentError, type Command } from 'commander';
import type { ClientRecord, Storage } from '../storage/types.js';
import { firstKeptDay, USAGE_KINDS, type UsageKind } from '../storage/usage-types.js';
import type { Cli } from './cli.js';
import { positiveInteger, requireClient, table } from './format.js';

const DAY_MS = 86_400_000;

/**
 * `clients usage <client_id> [--days N]`: a client's last use and its counts per day (tokens
 * issued, refreshes, bearer uses), as the server's recorder wrote them (every
 * `usage.flushSeconds`, so up to a minute behind by default).
 */
export function addUsageCommand(
  clients: Command,
  { withStorage, print }: Pick<Cli, 'withStorage' | 'print'>,
): void {
  clients
    .command('usage')
    .description(
      "a client's last use and its counts per day: tokens issued, refreshes, bearer uses (reads only; written by the server every usage.flushSeconds)",
    )
    .argument('<client_id>')
    .option('--days <n>', 'how many days back, today included', positiveInteger, 30)
    .action((clientId: string, options: { days: number }) =>
      withStorage(false, async (storage) => {
        const client = await requireClient(storage, clientId);
        const now = Date.now();
        const since = firstKeptDay(now, (options.days - 1) * DAY_MS);
        const usage = usageStoreOf(storage);
        const [counts, [own]] = await Promise.all([
          usage.counts({ clientId, since }),
          usage.lastUse({ clientId, userId: null }),
        ]);
        const byDay = new Map<string, Record<UsageKind, number>>();
        const totals: Record<UsageKind, number> = { token: 0, refresh: 0, bearer: 0 };
        for (const { day, kind, count } of counts) {
          let row = byDay.get(day);
          if (row === undefined) byDay.set(day, (row = { token: 0, refresh: 0, bearer: 0 }));
          row[kind] += count;
          totals[kind] += count;
        }
        const lastUsed = own === undefined ? null : new Date(own.at).toISOString();
        const json = {
          client_id: clientId,
          last_used_at: lastUsed,
          days: options.days,
          since,
          totals,
          by_day: [...byDay].map(([day, row]) => ({ day, ...row })),
        };
        const rows = [...byDay].map(([day, row]) => [day, ...USAGE_KINDS.map((kind) => String(row[kind]))]);
        print(
          json,
          [
            `client_id     ${clientId} (${client.applicationName})`,
            `last used     ${lastUsed ?? neverUsed(client)}`,
            `last ${options.days} days  ${USAGE_KINDS.map((kind) => counted(kind, totals[kind])).join(', ')}`,
            ...(rows.length === 0 ? [] : ['', table(['day', 'tokens', 'refreshes', 'bearer'], rows)]),
          ].join('\n'),
        );
      }),
    );
}

const KIND_WORDS: Record<UsageKind, [one: string, many: string]> = {
  token: ['token issued', 'tokens issued'],
  refresh: ['refresh', 'refreshes'],
  bearer: ['bearer use', 'bearer uses'],
};

const counted = (kind: UsageKind, n: number) => `${n} ${KIND_WORDS[kind][n === 1 ? 0 : 1]}`;

/** A client with no use written yet, and why it may be only not written yet. */
const neverUsed = (client: ClientRecord) =>
  `never (registered ${new Date(client.createdAt).toISOString()}; a server writes its counts every usage.flushSeconds, 60 s, and at closeGracefully: the last minute's may not be here yet)`;

/** The storage's usage store; the built-in SQL adapter always has one. */
function usageStoreOf(storage: Storage): NonNullable<Storage['usage']> {
  if (storage.usage === undefined) throw new Error('this storage keeps no per-app usage');
  return storage.usage;
}

/** Commander's parser of `--unused-for`: `30d` or `12h`, resolved in milliseconds. */
export function duration(value: string): number {
  const match = /^(\d{1,6})([dh])$/.exec(value);
  if (!match || Number(match[1]) === 0) {
    throw new InvalidArgumentError('must be a number of days or hours, such as 30d or 12h.');
  }
  return Number(match[1]) * (match[2] === 'd' ? DAY_MS : DAY_MS / 24);
}

/**
 * Those of `clients` not used for `ms` (a client never used: since it was registered), each with
 * its last use (`null`: never), in the order given.
 */
export async function unusedClients(
  storage: Storage,
  clients: ClientRecord[],
  ms: number,
  now: number,
): Promise<{ client: ClientRecord; lastUsedAt: number | null }[]> {
  const uses = await usageStoreOf(storage).lastUse({ userId: null });
  const lastUse = new Map(uses.map((use) => [use.clientId, use.at]));
  return clients
    .map((client) => ({ client, lastUsedAt: lastUse.get(client.clientId) ?? null }))
    .filter(({ client, lastUsedAt }) => (lastUsedAt ?? client.createdAt) <= now - ms);
}
