import type { Request } from 'express';
import { eventContext } from '../../events/emit.js';
import { revokeApplication as revokeGrantOf } from '../../grants/grant.js';
import type { AuthorizationServer } from '../../config/server.js';
import { lastUsesOf } from '../../usage/summary.js';

/** An application the user trusts, as the authorized-applications page shows it. */
export interface AuthorizedApplication {
  clientId: string;
  applicationName: string;
  /** The scopes the user trusted it with, with the operator's descriptions. */
  scopes: { name: string; description: string }[];
  /** When the user first trusted it (epoch ms). */
  authorizedAt: number;
  /** When the user last gave consent to it, for more scopes or again (epoch ms). */
  updatedAt: number;
  /** When it last used the user's account (per-app usage, epoch ms); absent: not since usage is kept. */
  lastUsedAt?: number;
}

/**
 * The applications `userId` trusts, oldest first: for a host that draws its own page instead of
 * letting `oauthRouter` serve the applications page (`applications: false`). A client acting as
 * itself (client credentials) is never among them: no member authorized it.
 */
export async function authorizedApplications(
  server: AuthorizationServer,
  userId: string,
): Promise<AuthorizedApplication[]> {
  const [grants, lastUses] = await Promise.all([
    server.storage.grants.list({ userId }),
    lastUsesOf(server.storage, userId),
  ]);
  const applications: AuthorizedApplication[] = [];
  for (const grant of grants) {
    if (grant.revokedAt !== null) continue;
    const client = await server.storage.clients.find(grant.clientId);
    // A client acting as itself (client credentials) was authorized by no member.
    if (!client || client.grantType === 'client_credentials') continue;
    applications.push({
      clientId: client.clientId,
      applicationName: client.applicationName,
      scopes: grant.scopes.map((name) => ({ name, description: server.options.scopes[name] ?? name })),
      authorizedAt: grant.createdAt,
      updatedAt: grant.updatedAt,
      ...(lastUses.has(client.clientId) ? { lastUsedAt: lastUses.get(client.clientId)! } : {}),
    });
  }
  return applications;
}

/**
 * Ends the user's trust in an application: revokes its grant, so every access and refresh token
 * and code it holds for this user stops working at once. The next authorization asks for trust
 * again. Resolves whether there was anything to revoke; reports a `consent.revoked` event when
 * there was (`req`, if given, adds its address to the event). The CLI's `grants revoke` does the
 * same.
 */
export async function revokeApplication(
  server: AuthorizationServer,
  userId: string,
  clientId: string,
  req?: Request,
): Promise<boolean> {
  return revokeGrantOf(server, userId, clientId, 'user', eventContext(req));
}
