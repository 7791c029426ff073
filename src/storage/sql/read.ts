import { sql } from 'kysely';
import type { Storage } from '../types.js';
import type { SqlContext } from './context.js';
import { param, type Prepared } from './prepared.js';
import { clientOfJson, COLUMNS, jsonRow, toGrant, type GrantRow } from './rows.js';
import { found, foundQuery } from './tokens.js';

/** The row of the reader's statement: `client`, `token`, `grant`, `pair`, then `e0`, `e1`, … for the ephemeral keys. */
type ReadRow = Record<string, string | null>;

/**
 * The SQL adapter's {@link Storage.reader}: the reads asked for in one statement, each one a
 * scalar subquery of a `SELECT` without `FROM` (one row, `null` where nothing is found): the
 * client by primary key, each ephemeral key live at `now`, the token joined with its grant and
 * client as `tokens.find` reads it, and the grant an entry names (`grantOf`): its user, client
 * and grant id read out of the entry's JSON, the grant found by its primary key; or the grant of
 * a user and client (`grant`), by its primary key. One prepared
 * statement per number of ephemeral keys (the library asks for at most three); a read not asked
 * for binds `null`, which matches no row.
 */
export function sqlStorageReader(
  ctx: SqlContext,
  stores: NonNullable<Storage['reader']>['stores'],
): NonNullable<Storage['reader']> {
  const { db, postgres, prepare } = ctx;
  const statements = new Map<number, Prepared<ReadRow>>();
  // A field of the entry's JSON (the library's own, written by the library).
  const field = (name: string) =>
    postgres
      ? sql<string>`cast(${sql.ref('e.value')} as json) ->> ${sql.lit(name)}`
      : sql<string>`json_extract(${sql.ref('e.value')}, ${sql.lit(`$.${name}`)})`;
  // [clientId, tokenHash, grantOf key, now, grant's userId, clientId, (key, now) per ephemeral key]
  const statement = (keys: number) =>
    prepare(
      db.selectNoFrom((eb) => [
        eb
          .selectFrom('oauth_clients')
          .select(jsonRow(postgres, COLUMNS.oauth_clients).as('client'))
          .where('client_id', '=', param)
          .as('client'),
        foundQuery({ db, postgres }).as('token'),
        eb
          .selectFrom('oauth_ephemeral as e')
          .innerJoin('oauth_grants as g', (join) =>
            join
              .on('g.user_id', '=', field('userId'))
              .on('g.client_id', '=', field('clientId'))
              .on('g.grant_id', '=', field('grantId')),
          )
          .select(jsonRow(postgres, GRANT_COLUMNS).as('grant'))
          .where('e.key', '=', param)
          .where('e.expires_at', '>', param)
          .as('grant'),
        eb
          .selectFrom('oauth_grants')
          .select(jsonRow(postgres, COLUMNS.oauth_grants).as('pair'))
          .where('user_id', '=', param)
          .where('client_id', '=', param)
          .as('pair'),
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
    async read({ client, ephemeral = [], token, grantOf, grant }, now) {
      let run = statements.get(ephemeral.length);
      if (run === undefined) statements.set(ephemeral.length, (run = statement(ephemeral.length)));
      const [row = {}] = await run([
        client ?? null,
        token ?? null,
        grantOf ?? null,
        now,
        grant?.userId ?? null,
        grant?.clientId ?? null,
        ...ephemeral.flatMap((key) => [key, now]),
      ]);
      return {
        client: row.client == null ? null : clientOfJson(row.client),
        ephemeral: Object.fromEntries(ephemeral.map((key, i) => [key, row[`e${i}`] ?? null])),
        token: row.token == null ? null : found(row.token),
        grant: grantOfJson(row.grant ?? row.pair ?? null),
      };
    },
  };
}

const GRANT_COLUMNS = COLUMNS.oauth_grants.map((column) => `g.${column}` as const);

/** A grant of a JSON array of {@link COLUMNS}`.oauth_grants`, in order. */
function grantOfJson(json: string | null) {
  if (json === null) return null;
  const values = JSON.parse(json) as unknown[];
  return toGrant(
    Object.fromEntries(COLUMNS.oauth_grants.map((column, i) => [column, values[i]])) as GrantRow,
  );
}
