import type { UserRecord } from '../../storage/types.js';
import { normalizeIdentifier } from './normalize-identifier.js';

/** What to do for one identity stored under more than one spelling, or under a spelling that is not its normal form. */
export interface ClaimedIdMerge {
  provider: string;
  /** The normal form: the identifier every login of this identity looks the user up by from now on. */
  identifier: string;
  /**
   * The row to keep: the one already stored under `identifier`, else the oldest (then the
   * smallest id). Its id is the one logins resolve to from now on.
   */
  keep: UserRecord;
  /** Whether `keep` must be renamed to `identifier` (no row holds the normal form yet). */
  rename: boolean;
  /**
   * The other rows of this identity, oldest first. No login reaches them any more: move their
   * grants and tokens to `keep` (or revoke them), then delete them.
   */
  merge: UserRecord[];
}

/**
 * Plans the upgrade of users stored before claimed ids were normalised (see
 * `docs/upgrading-claimed-id.md`). Groups the rows by provider and normal form
 * ({@link normalizeIdentifier}) and resolves one {@link ClaimedIdMerge} for every group that needs
 * work: more than one row, or one row not stored under its normal form. Rows whose identifier is
 * not an http(s) URL (a custom strategy's, say) are left alone. Pure: it reads nothing and
 * changes nothing; the caller applies the plan to its database.
 *
 * @example
 * const rows = await db.selectFrom('oauth_users').select(['id', 'identifier', 'provider', 'created_at as createdAt']).execute();
 * for (const step of planClaimedIdMerge(rows)) console.log(step.keep.id, step.rename, step.merge.map((u) => u.id));
 * @see OpenID 2.0 section 7.2; RFC 3986 section 6
 */
export function planClaimedIdMerge(users: Iterable<UserRecord>): ClaimedIdMerge[] {
  const groups = new Map<string, { provider: string; identifier: string; rows: UserRecord[] }>();
  for (const user of users) {
    const identifier = normalizeIdentifier(user.identifier);
    if (identifier === null) continue;
    const key = JSON.stringify([user.provider, identifier]);
    const group = groups.get(key) ?? { provider: user.provider, identifier, rows: [] };
    group.rows.push(user);
    groups.set(key, group);
  }
  const plan: ClaimedIdMerge[] = [];
  for (const { provider, identifier, rows } of groups.values()) {
    rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const keep = rows.find((u) => u.identifier === identifier) ?? rows[0]!;
    const rename = keep.identifier !== identifier;
    if (!rename && rows.length === 1) continue;
    plan.push({ provider, identifier, keep, rename, merge: rows.filter((u) => u !== keep) });
  }
  return plan.sort((a, b) => a.keep.createdAt - b.keep.createdAt);
}
