import type { Request } from 'express';
import { emit, eventContext } from '../events/emit.js';
import type { AuthorizationServer } from '../server.js';

/** An application the user trusts, as the authorized-applications page shows it. */
export interface AuthorizedApplication {
  clientId: string;
  applicationName: string;
  /** The scopes the user trusted it with, with the operator's descriptions. */
  scopes: { name: string; description: string }[];
  /** When the user first trusted it (epoch ms). */
  authorizedAt: number;
  /** When a token was last issued to it for this user, or `null` (epoch ms). */
  lastUsedAt: number | null;
}

/**
 * The applications `userId` trusts, oldest first: for a host that draws its own page instead of
 * mounting `applicationsRouter`.
 */
export async function authorizedApplications(
  server: AuthorizationServer,
  userId: string,
): Promise<AuthorizedApplication[]> {
  const consents = await server.storage.consents.list({ userId });
  const applications: AuthorizedApplication[] = [];
  for (const consent of consents) {
    const client = await server.storage.clients.find(consent.clientId);
    if (!client) continue;
    applications.push({
      clientId: client.clientId,
      applicationName: client.applicationName,
      scopes: consent.scopes.map((name) => ({ name, description: server.options.scopes[name] ?? name })),
      authorizedAt: consent.createdAt,
      lastUsedAt: consent.lastUsedAt,
    });
  }
  return applications;
}

/**
 * Ends the user's trust in an application: deletes the remembered consent and revokes every
 * access and refresh token the application holds for this user, at once. The next authorization
 * asks for trust again. Resolves whether there was anything to revoke; reports a
 * `consent.revoked` event when there was (`req`, if given, adds its address to the event).
 */
export async function revokeApplication(
  server: AuthorizationServer,
  userId: string,
  clientId: string,
  req?: Request,
): Promise<boolean> {
  const consent = await server.storage.consents.revoke(userId, clientId);
  const tokensRevoked = await server.storage.tokens.revokeForUserAndClient(userId, clientId, server.clock());
  if (!consent && tokensRevoked === 0) return false;
  emit(server, { type: 'consent.revoked', userId, clientId, tokensRevoked, ...eventContext(req) });
  return true;
}
