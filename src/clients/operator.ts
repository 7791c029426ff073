import type { ClientRecord, Storage } from '../storage/types.js';
import { operatorMethod, UnknownClientError } from './register.js';
import { ownerOf, targetOf, type RegistrationTarget } from './target.js';

/*
 * The operator's decisions on clients: disable, enable, remove, and those on members'
 * applications (the developer page's, issue 40): approve, verify, suspend every application of a
 * member, give an application to another owner. On a storage alone or on the server, as
 * updateClient and rotateClientSecret: the CLI's commands (src/cli/clients.ts, member-apps.ts)
 * call them, and a host's own admin page may too. Each change is reported on the target's events
 * (`client.disabled`, `client.suspended`, ...: the audit trail's), a decision that changed
 * nothing is not. An unknown client is an {@link UnknownClientError}.
 */

/**
 * The clients of `ownerId` (a member's account id), or the operator's (`null`: no owner), oldest
 * first. An adapter may list more than its filter asks: only the owner's are kept.
 */
export async function clientsOwnedBy(storage: Storage, ownerId: string | null): Promise<ClientRecord[]> {
  const list = operatorMethod(storage, 'list');
  const listed = ownerId === null ? await list() : await list({ ownerId });
  return listed.filter((client) => (client.ownerId ?? null) === ownerId);
}

/** The members' clients (those with an owner), oldest first. */
export async function memberClients(storage: Storage): Promise<ClientRecord[]> {
  return (await operatorMethod(storage, 'list')()).filter((client) => client.ownerId != null);
}

/**
 * Approves a client waiting for the operator's approval (`developerApps.requireApproval`): it may
 * authorize and authenticate from now on, unless it is disabled too. `approved` is `false` when
 * it was not waiting (nothing is written then).
 */
export async function approveClient(
  target: RegistrationTarget,
  clientId: string,
): Promise<{ client: ClientRecord; approved: boolean }> {
  const { storage, report } = targetOf(target);
  const client = await storage.clients.find(clientId);
  if (!client) throw new UnknownClientError(clientId);
  if (client.awaitingApproval !== true) return { client, approved: false };
  const updated = await operatorMethod(storage, 'update')(clientId, { awaitingApproval: false });
  if (!updated) throw new UnknownClientError(clientId);
  report({ type: 'client.approved', clientId, ...ownerOf(updated), by: 'operator' });
  return { client: updated, approved: true };
}

/**
 * Marks a client verified (the operator vouches for it: the consent page says so, and the reach
 * cap of unverified members' applications no longer applies to it), or no longer verified.
 * `changed` is `false` when it was so already (nothing is written then).
 */
export async function setClientVerified(
  target: RegistrationTarget,
  clientId: string,
  verified: boolean,
): Promise<{ client: ClientRecord; changed: boolean }> {
  const { storage, report } = targetOf(target);
  const client = await storage.clients.find(clientId);
  if (!client) throw new UnknownClientError(clientId);
  if ((client.verified === true) === verified) return { client, changed: false };
  const updated = await operatorMethod(storage, 'update')(clientId, { verified });
  if (!updated) throw new UnknownClientError(clientId);
  const type = verified ? 'client.verified' : 'client.unverified';
  report({ type, clientId, ...ownerOf(updated), by: 'operator' });
  return { client: updated, changed: true };
}

/**
 * Suspends every client of the member `ownerId`: each is disabled (its tokens stop working at
 * once), and the member may create no other while one stays disabled. Resolves the ids disabled
 * now, and those that were disabled already; both empty when the member has no client. Reports
 * one `client.suspended` for those disabled now, if any.
 */
export async function suspendClientsOf(
  target: RegistrationTarget,
  ownerId: string,
): Promise<{ suspended: string[]; alreadyDisabled: string[] }> {
  const { storage, report } = targetOf(target);
  const update = operatorMethod(storage, 'update');
  const suspended: string[] = [];
  const alreadyDisabled: string[] = [];
  for (const client of await clientsOwnedBy(storage, ownerId)) {
    if (client.disabled) {
      alreadyDisabled.push(client.clientId);
      continue;
    }
    // A client deleted since the list is not suspended: it has no tokens left to stop.
    if (await update(client.clientId, { disabled: true })) suspended.push(client.clientId);
  }
  if (suspended.length > 0) {
    const count = suspended.length;
    report({ type: 'client.suspended', ownerId, clientIds: suspended, count, by: 'operator' });
  }
  return { suspended, alreadyDisabled };
}

/**
 * Gives a client to another owner: the member `ownerId` (who then sees, changes, rotates and
 * deletes it on the developer page), or the operator (`null`). Its grants, tokens, secret and
 * marks (verified, approval, disabled) stay as they are. Resolves the client and its previous
 * owner (`null`: the operator's).
 */
export async function transferClient(
  target: RegistrationTarget,
  clientId: string,
  ownerId: string | null,
): Promise<{ client: ClientRecord; previousOwnerId: string | null }> {
  const { storage, report } = targetOf(target);
  const client = await storage.clients.find(clientId);
  if (!client) throw new UnknownClientError(clientId);
  const previousOwnerId = client.ownerId ?? null;
  if (previousOwnerId === ownerId) return { client, previousOwnerId };
  if (ownerId !== null && client.registeredVia === 'document') {
    // Its fields come from its metadata document at each use: a member's changes would not stick.
    throw new TypeError(
      `openid-oauth-bridge: client ${clientId} describes itself in a client metadata document: it cannot be given to a member`,
    );
  }
  if (ownerId !== null && client.grantType === 'client_credentials') {
    // The developer page makes applications that act for members; this one acts as itself.
    throw new TypeError(
      `openid-oauth-bridge: client ${clientId} is a client_credentials client, the operator's: it cannot be given to a member`,
    );
  }
  const updated = await operatorMethod(storage, 'update')(clientId, { ownerId });
  if (!updated) throw new UnknownClientError(clientId);
  report({
    type: 'client.transferred',
    clientId,
    ...ownerOf(updated),
    ...(previousOwnerId === null ? {} : { previousOwnerId }),
    by: 'operator',
  });
  return { client: updated, previousOwnerId };
}

/**
 * Stops a client (`disabled`: it can no longer authorize or authenticate, and its tokens stop
 * working at once), or lets it work again. Resolves the client as changed; reports
 * `client.disabled` or `client.enabled` each time, as the operator decided it.
 */
export async function setClientDisabled(
  target: RegistrationTarget,
  clientId: string,
  disabled: boolean,
): Promise<ClientRecord> {
  const { storage, report } = targetOf(target);
  const updated = await operatorMethod(storage, 'update')(clientId, { disabled });
  if (!updated) throw new UnknownClientError(clientId);
  const type = disabled ? 'client.disabled' : 'client.enabled';
  report({ type, clientId, ...ownerOf(updated), by: 'operator' });
  return updated;
}

/**
 * Deletes a client with its grants: its tokens and codes stop working at once. Reports
 * `client.removed`. One write, no read: the store's answer tells an unknown client.
 */
export async function removeClient(target: RegistrationTarget, clientId: string): Promise<void> {
  const { storage, report } = targetOf(target);
  if (!(await operatorMethod(storage, 'remove')(clientId))) throw new UnknownClientError(clientId);
  report({ type: 'client.removed', clientId, by: 'operator' });
}
