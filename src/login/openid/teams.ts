import { field, signedExtension, type OpenIdMessage } from './callback-message.js';

/**
 * Launchpad's OpenID teams extension, which Launchpad and Ubuntu One answer: the relying party asks
 * whether the user belongs to some teams (`query_membership`), the provider says which of them
 * (`is_member`), indirect memberships included.
 *
 * @see https://launchpad.net/openid-teams
 */
export const TEAMS_NS = 'http://ns.launchpad.net/2007/openid-teams';

/** The request fields asking about membership of `teams`. */
export function teamsRequestFields(teams: readonly string[]): [string, string][] {
  if (teams.length === 0) return [];
  return [
    ['openid.ns.lp', TEAMS_NS],
    ['openid.lp.query_membership', teams.join(',')],
  ];
}

/**
 * The teams of `asked` the provider signed the user a member of: the namespace declaration and
 * `is_member` must be in `openid.signed` (an unsigned field could have been added by anyone on the
 * way), and a team nobody asked about is ignored. `undefined` when nothing was asked; `[]` when the
 * answer is absent, unsigned or names none of them. Call only for an assertion whose signature was
 * confirmed.
 */
export function signedTeams(message: OpenIdMessage, asked: readonly string[]): string[] | undefined {
  if (asked.length === 0) return undefined;
  const extension = signedExtension(message, [TEAMS_NS]);
  if (extension === undefined || !extension.signed.has(`${extension.alias}.is_member`)) return [];
  const members = (field(message, `${extension.alias}.is_member`) ?? '').split(',');
  return asked.filter((team) => members.includes(team));
}
