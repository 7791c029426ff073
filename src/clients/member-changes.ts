import { generateSecret, hashSecret } from '../crypto/secrets.js';
import { emit, type EventContext } from '../events/emit.js';
import { isPublicClient } from '../rules/client-kind.js';
import { ephemeralKeys } from '../storage/keys.js';
import type { ClientChanges, ClientRecord } from '../storage/types.js';
import {
  appsOf,
  creationRefusal,
  MemberAppRefused,
  type checkMemberInput,
  type Member,
  type MemberAppDeps,
} from './members.js';
import { operatorMethod, registerWith, type IssuedClient } from './register.js';

/*
 * What a member does to their applications on the developer page: create, change, rotate the
 * secret, delete. Each is written the one way the library writes clients, and reported as an
 * event that carries no secret.
 */

/**
 * Creates `member`'s application, after the limits: not suspended, under the number of
 * applications a member may have, under the number created per hour. The one way a member's
 * application is written ({@link registerWith}); a confidential one's secret is resolved once.
 * Reports `app.created`.
 *
 * @throws MemberAppRefused for a limit.
 */
export async function createMemberApp(
  server: MemberAppDeps,
  member: Member,
  checked: ReturnType<typeof checkMemberInput>,
  context: EventContext,
): Promise<IssuedClient> {
  const refusal = creationRefusal(server, await appsOf(server, member.id));
  if (refusal !== undefined) throw new MemberAppRefused(refusal, 403);
  const settings = server.options.developerApps;
  const now = server.clock();
  const counter = await server.storage.ephemeral.increment(
    ephemeralKeys.rateLimit(`developer-create:${member.id}`),
    now + 3_600_000,
    now,
  );
  if (counter.count > settings.maxCreatedPerHour) {
    const retryAfter = Math.max(1, Math.ceil((counter.expiresAt - now) / 1000));
    emit(server, { type: 'rate_limit.exceeded', limit: 'app_creation', per: 'account', ...context });
    throw new MemberAppRefused(
      `You have created ${settings.maxCreatedPerHour} applications in the last hour: try again later.`,
      429,
      retryAfter,
    );
  }
  const { description, homepageUri, ...registration } = checked;
  const issued = await registerWith(
    server,
    registration,
    {},
    {
      createdAt: now,
      ownerId: member.id,
      ...(settings.requireApproval ? { awaitingApproval: true } : {}),
      ...(description === undefined ? {} : { description }),
      ...(homepageUri === undefined ? {} : { homepageUri }),
    },
  );
  // A storage that does not keep the owner or the approval would make the member's application
  // look like the operator's (no approval, no reach cap): refused, and the client taken back.
  const stored = await server.storage.clients.find(issued.clientId);
  if (stored?.ownerId !== member.id || (settings.requireApproval && stored.awaitingApproval !== true)) {
    await operatorMethod(server.storage, 'remove')(issued.clientId);
    throw new TypeError(
      "openid-oauth-bridge: the storage adapter does not keep a client's ownerId and awaitingApproval, which members' applications need (docs/storage.md)",
    );
  }
  emit(server, {
    type: 'app.created',
    clientId: issued.clientId,
    ownerId: member.id,
    confidential: issued.clientSecret !== undefined,
    awaitingApproval: settings.requireApproval,
    ...context,
  });
  return issued;
}

/**
 * Changes `client` (a member's) to `checked`: its kind stays (a new kind is a new application).
 * Reports `app.updated` with the names of the fields that changed.
 */
export async function updateMemberApp(
  server: MemberAppDeps,
  client: ClientRecord,
  checked: ReturnType<typeof checkMemberInput>,
  context: EventContext,
): Promise<ClientRecord> {
  const changes: ClientChanges = {
    applicationName: checked.applicationName,
    ...(client.grantType === 'device_code' ? {} : { redirectUri: checked.redirectUri ?? client.redirectUri }),
    scopes: checked.scopes ?? client.scopes,
    defaultScopes: client.defaultScopes?.filter((scope) => checked.scopes?.includes(scope)) ?? null,
    postLogoutRedirectUris: checked.postLogoutRedirectUris ?? [],
    allowedTeams: checked.allowedTeams ?? [],
    description: checked.description ?? null,
    homepageUri: checked.homepageUri ?? null,
  };
  // Narrowed scopes narrow the default ones; none left means all of them.
  if (changes.defaultScopes?.length === 0) changes.defaultScopes = null;
  const changed = Object.entries(changes)
    .filter(([field, value]) => !sameValue((client as unknown as Record<string, unknown>)[field], value))
    .map(([field]) => field);
  // What the operator verified or approved is what it was: a change of what members see or where
  // codes go is reviewed again (and an unverified application is under the reach cap again).
  if (changed.some((field) => REVIEWED.has(field))) {
    if (client.verified === true) changes.verified = false;
    if (server.options.developerApps.requireApproval) changes.awaitingApproval = true;
  }
  const updated = await operatorMethod(server.storage, 'update')(client.clientId, changes);
  if (updated === null) throw new MemberAppRefused('This application no longer exists.', 404);
  if (changed.length) {
    emit(server, {
      type: 'app.updated',
      clientId: client.clientId,
      ownerId: client.ownerId!,
      changed,
      ...context,
    });
  }
  return updated;
}

/** The fields the operator's verification and approval vouch for. */
const REVIEWED = new Set([
  'applicationName',
  'redirectUri',
  'postLogoutRedirectUris',
  'scopes',
  'description',
  'homepageUri',
]);

/** Whether a field keeps its value (a list by its items; absent, `null` and `undefined` alike). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
  return (a ?? null) === (b ?? null);
}

/**
 * Gives `client` a new secret, resolved once. The old one keeps working for `overlapMinutes` (at
 * most `developerApps.maxSecretOverlapMinutes`; 0: it stops at once). Reports
 * `app.secret_rotated`.
 */
export async function rotateMemberSecret(
  server: MemberAppDeps,
  client: ClientRecord,
  overlapMinutes: number,
  context: EventContext,
): Promise<string> {
  if (isPublicClient(client)) throw new MemberAppRefused('A public application has no secret.');
  const max = server.options.developerApps.maxSecretOverlapMinutes;
  if (!Number.isInteger(overlapMinutes) || overlapMinutes < 0 || overlapMinutes > max) {
    throw new MemberAppRefused(`The old secret may keep working for at most ${max} minutes.`);
  }
  const secret = generateSecret();
  const expiresAt = server.clock() + overlapMinutes * 60_000;
  await operatorMethod(server.storage, 'update')(client.clientId, {
    secretHash: hashSecret(secret),
    previousSecret: overlapMinutes > 0 ? { hash: client.secretHash!, expiresAt } : null,
  });
  emit(server, {
    type: 'app.secret_rotated',
    clientId: client.clientId,
    ownerId: client.ownerId!,
    ...(overlapMinutes > 0 ? { previousValidUntil: expiresAt } : {}),
    ...context,
  });
  return secret;
}

/**
 * Deletes a member's application, with its grants: every token and code of it stops working at
 * once, as the operator's `clients remove` does. Reports `app.deleted`.
 */
export async function deleteMemberApp(
  server: MemberAppDeps,
  client: ClientRecord,
  context: EventContext,
): Promise<void> {
  await operatorMethod(server.storage, 'remove')(client.clientId);
  emit(server, { type: 'app.deleted', clientId: client.clientId, ownerId: client.ownerId!, ...context });
}
