import type { EventContext } from '../events/emit.js';
import type { ServerEventInput, TeamRefusedEvent } from '../events/types.js';
import type { ClientRecord, Storage } from '../storage/types.js';

/**
 * The teams of `subject` as its latest login saved them (the `groups` of `users.findClaims`); `[]`
 * when it has none, or the storage keeps no claims.
 */
export async function teamsOf(deps: { readonly storage: Storage }, subject: string): Promise<string[]> {
  const claims = await deps.storage.users.findClaims?.(subject);
  const groups = claims?.groups;
  return Array.isArray(groups) ? groups.filter((team) => typeof team === 'string') : [];
}

/** Whether a client that only members of `allowed` may use (none: anyone) admits `teams`. */
export function admits(
  allowed: readonly string[] | undefined,
  teams: readonly string[] | undefined,
): boolean {
  return (
    allowed === undefined || allowed.length === 0 || allowed.some((team) => teams?.includes(team) === true)
  );
}

/** The `team.refused` event of `client`'s gate refusing `userId`, on every path that checks it. */
export function teamRefused(
  client: ClientRecord,
  userId: string,
  flow: TeamRefusedEvent['flow'],
  context: EventContext,
): ServerEventInput {
  return {
    type: 'team.refused',
    userId,
    clientId: client.clientId,
    allowedTeams: [...(client.allowedTeams ?? [])],
    flow,
    ...context,
  };
}
