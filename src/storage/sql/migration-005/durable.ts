import { randomBytes } from 'node:crypto';
import { type Insertable, sql } from 'kysely';
import type { Database } from '../schema.js';
import {
  type Db,
  eachPage,
  type OldTable,
  PAGE,
  scopesOf,
  stillWorked,
  stillWorkedWithoutGrant,
} from './before.js';

const newGrantId = () => randomBytes(16).toString('base64url');

/**
 * Each consent as a standing grant with a new random id, a page at a time. A user and client that
 * already have a grant (from an earlier, interrupted run) keep it.
 */
export async function grantsFromConsents(db: Db): Promise<void> {
  await eachPage(
    (after: { user_id: string; client_id: string } | undefined) =>
      db
        .selectFrom('oauth_consents')
        .selectAll()
        .$if(after !== undefined, (qb) =>
          qb.where((eb) =>
            eb(eb.refTuple('user_id', 'client_id'), '>', eb.tuple(after!.user_id, after!.client_id)),
          ),
        )
        .orderBy('user_id')
        .orderBy('client_id')
        .limit(PAGE)
        .execute(),
    (consents) =>
      insertGrants(
        db,
        consents.map((consent) => ({
          grant_id: newGrantId(),
          user_id: consent.user_id,
          client_id: consent.client_id,
          scopes: consent.scopes,
          created_at: Number(consent.created_at),
          updated_at: Number(consent.updated_at),
          revoked_at: null,
        })),
      ),
  );
}

/**
 * A grant for each user and client that had a live token or an unused code but no consent, with
 * the union of their scopes, created when the first of them was and updated when the last was.
 */
export async function grantsForPairsWithoutConsent(db: Db, now: number, old: Set<OldTable>): Promise<void> {
  const columns = ['o.user_id', 'o.client_id', 'o.scopes', 'o.created_at'] as const;
  const uses = [
    ...(old.has('oauth_access_tokens')
      ? await db
          .selectFrom('oauth_access_tokens as o')
          .select(columns)
          .where('o.expires_at', '>', now)
          .where(stillWorkedWithoutGrant)
          .execute()
      : []),
    ...(old.has('oauth_refresh_tokens')
      ? await db
          .selectFrom('oauth_refresh_tokens as o')
          .select(columns)
          .where((eb) => eb.or([eb('o.expires_at', 'is', null), eb('o.expires_at', '>', now)]))
          .where(stillWorkedWithoutGrant)
          .execute()
      : []),
    ...(old.has('oauth_codes')
      ? await db
          .selectFrom('oauth_codes as o')
          .select(columns)
          .where('o.expires_at', '>', now)
          .where('o.used_at', 'is', null)
          .where(stillWorkedWithoutGrant)
          .execute()
      : []),
  ];
  const grants = new Map<string, Insertable<Database['oauth_grants']> & { scopeSet: Set<string> }>();
  for (const use of uses) {
    const pair = JSON.stringify([use.user_id, use.client_id]);
    const at = Number(use.created_at);
    const grant = grants.get(pair) ?? {
      grant_id: newGrantId(),
      user_id: use.user_id,
      client_id: use.client_id,
      scopes: '',
      created_at: at,
      updated_at: at,
      revoked_at: null,
      scopeSet: new Set<string>(),
    };
    for (const scope of scopesOf(use.scopes)) grant.scopeSet.add(scope);
    grant.created_at = Math.min(grant.created_at, at);
    grant.updated_at = Math.max(grant.updated_at, at);
    grants.set(pair, grant);
  }
  const rows = [...grants.values()].map(({ scopeSet, ...grant }) => ({
    ...grant,
    scopes: [...scopeSet].join(' '),
  }));
  for (let i = 0; i < rows.length; i += PAGE) await insertGrants(db, rows.slice(i, i + PAGE));
}

/** Inserts grants for users and clients without one: a grant already there is kept. */
async function insertGrants(db: Db, rows: Insertable<Database['oauth_grants']>[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('oauth_grants')
    .values(rows)
    .onConflict((oc) => oc.columns(['user_id', 'client_id']).doNothing())
    .execute();
}

/** The columns of `oauth_tokens`, in the order the token moves select them. */
const TOKEN_COLUMNS = [
  'token_hash',
  'type',
  'grant_id',
  'client_id',
  'user_id',
  'scopes',
  'created_at',
  'expires_at',
  'origin',
  'rotated_at',
] as const;

/**
 * Live access tokens of grants not revoked, into `oauth_tokens` in one statement, each re-pointed
 * to the grant of its user and client (which every one of them now has).
 */
export async function moveAccessTokens(db: Db, now: number): Promise<void> {
  await db
    .insertInto('oauth_tokens')
    .columns(TOKEN_COLUMNS)
    .expression(
      db
        .selectFrom('oauth_access_tokens as o')
        .innerJoin('oauth_grants as g', (join) =>
          join.onRef('g.user_id', '=', 'o.user_id').onRef('g.client_id', '=', 'o.client_id'),
        )
        .select([
          'o.token_hash',
          sql<string>`'access_token'`.as('type'),
          'g.grant_id',
          'o.client_id',
          'o.user_id',
          'o.scopes',
          'o.created_at',
          'o.expires_at',
          'o.origin',
          sql<null>`cast(null as bigint)`.as('rotated_at'),
        ])
        .where('o.expires_at', '>', now)
        .where(stillWorked),
    )
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .execute();
}

/** Live refresh tokens of grants not revoked, likewise, with their `rotated_at`. */
export async function moveRefreshTokens(db: Db, now: number): Promise<void> {
  await db
    .insertInto('oauth_tokens')
    .columns(TOKEN_COLUMNS)
    .expression(
      db
        .selectFrom('oauth_refresh_tokens as o')
        .innerJoin('oauth_grants as g', (join) =>
          join.onRef('g.user_id', '=', 'o.user_id').onRef('g.client_id', '=', 'o.client_id'),
        )
        .select([
          'o.token_hash',
          sql<string>`'refresh_token'`.as('type'),
          'g.grant_id',
          'o.client_id',
          'o.user_id',
          'o.scopes',
          'o.created_at',
          'o.expires_at',
          sql<string>`'authorization_code'`.as('origin'),
          'o.rotated_at',
        ])
        .where((eb) => eb.or([eb('o.expires_at', 'is', null), eb('o.expires_at', '>', now)]))
        .where(stillWorked),
    )
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .execute();
}
