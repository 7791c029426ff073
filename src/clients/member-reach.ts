import { CONTROL_OR_INVISIBLE } from '../rules/names.js';
import type { ClientRecord } from '../storage/types.js';
import type { MemberAppDeps } from './members.js';

/*
 * How far a member's application reaches: the members who trust it, the reach cap of an
 * application the operator has not verified, and who made it, as the consent page names them.
 */

/** How far an application reaches: the members who trust it now, and the latest consent given. */
export interface Reach {
  members: number;
  lastAuthorizedAt?: number;
}

/** {@link Reach} of `clientId`, from its grants. */
export async function reachOf(server: MemberAppDeps, clientId: string): Promise<Reach> {
  const standing = (await server.storage.grants.list({ clientId })).filter(
    (grant) => grant.revokedAt === null,
  );
  const last = Math.max(0, ...standing.map((grant) => grant.updatedAt));
  return { members: standing.length, ...(last > 0 ? { lastAuthorizedAt: last } : {}) };
}

/**
 * Whether `userId` would exceed the reach cap of `client`: a member's application the operator
 * has not verified may be trusted by at most `developerApps.unverifiedReach` members. Someone who
 * trusts it already is within it. Resolves the cap reached, or `undefined`. Two people consenting
 * at the same moment may both pass at the cap's last place: the cap is a brake on an unreviewed
 * application's spread, not an exact count.
 */
export async function reachCapped(
  server: MemberAppDeps,
  client: Pick<ClientRecord, 'clientId' | 'ownerId' | 'verified'>,
  userId: string,
): Promise<number | undefined> {
  const cap = server.options.developerApps.unverifiedReach;
  if (cap === false || client.ownerId == null || client.verified === true) return undefined;
  const standing = (await server.storage.grants.list({ clientId: client.clientId })).filter(
    (grant) => grant.revokedAt === null,
  );
  if (standing.some((grant) => grant.userId === userId)) return undefined;
  return standing.length >= cap ? cap : undefined;
}

/**
 * Who made a member's application, as the consent page names them: the display name of their
 * latest login, else their identifier (the OpenID claimed identifier), else their account id (a
 * member the host signs in is known by the host's id alone).
 */
export async function makerName(server: MemberAppDeps, ownerId: string): Promise<string> {
  const claims = await server.storage.users.findClaims?.(ownerId);
  // A provider's name may carry what a member's own would be refused for: shown without it.
  const name = typeof claims?.name === 'string' ? shown(claims.name) : '';
  if (name !== '') return name;
  const user = await server.storage.users.find?.(ownerId);
  return shown(user?.identifier ?? ownerId);
}

/** `text` without control or invisible characters, at most 100 characters. */
function shown(text: string): string {
  const hidden = new RegExp(CONTROL_OR_INVISIBLE.source, 'gu');
  return text.replace(hidden, '').trim().slice(0, 100);
}
