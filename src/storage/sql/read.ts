import type { Storage } from '../types.js';
import type { SqlContext } from './context.js';
import { param, type Prepared } from './prepared.js';
import { clientOfJson, COLUMNS, jsonRow } from './rows.js';
import { found, foundQuery } from './tokens.js';

/** The row of the reader's statement: `client`, `token`, then `e0`, `e1`, … for the ephemeral keys. */
type ReadRow = Record<string, string | null>;

/**
 * The SQL adapter's {@link Storage.reader}: the reads asked for in one statement, each one a
 * scalar subquery of a `SELECT` without `FROM` (one row, `null` where nothing is found): the
 * client by primary key, each ephemeral key live at `now`, the token joined with its grant and
 * client as `tokens.find` reads it. One prepared statement per number of ephemeral keys (the
 * library asks for at most three); a read not asked for binds `null`, which matches no row.
 */
export function sqlStorageReader(
  ctx: SqlContext,
  stores: NonNullable<Storage['reader']>['stores'],
): NonNullable<Storage['reader']> {
  const { db, postgres, prepare } = ctx;
  const statements = new Map<number, Prepared<ReadRow>>();
  // [clientId, tokenHash, (key, now) per ephemeral key]
  const statement = (keys: number) =>
    prepare(
      db.selectNoFrom((eb) => [
        eb
          .selectFrom('oauth_clients')
          .select(jsonRow(postgres, COLUMNS.oauth_clients).as('client'))
          .where('client_id', '=', param)
          .as('client'),
        foundQuery({ db, postgres }).as('token'),
        ...Array.from({ length: keys }, (_, i) =>
          eb
            .selectFrom('oauth_ephemeral')
            .select('value')
            .where('key', '=', param)
            .where('expires_at', '>', param)
            .as(`e${i}`),
        ),
      ]),
    ) as Prepared<ReadRow>;

  return {
    stores,
    async read({ client, ephemeral = [], token }, now) {
      let run = statements.get(ephemeral.length);
      if (run === undefined) statements.set(ephemeral.length, (run = statement(ephemeral.length)));
      const [row = {}] = await run([
        client ?? null,
        token ?? null,
        ...ephemeral.flatMap((key) => [key, now]),
      ]);
      return {
        client: row.client == null ? null : clientOfJson(row.client),
        ephemeral: Object.fromEntries(ephemeral.map((key, i) => [key, row[`e${i}`] ?? null])),
        token: row.token == null ? null : found(row.token),
      };
    },
  };
}
