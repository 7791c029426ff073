import { randomId } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import { emit, type EventContext } from '../events/emit.js';
import { ephemeralKeys } from '../storage/keys.js';
import type { ClientRecord, GrantRecord } from '../storage/types.js';
import type { GrantDeps } from './deps.js';
import { standingScopes, type Subject } from './tokens.js';

/**
 * The subject a `client_credentials` client's own grant and tokens name in place of a user:
 * `client:<client_id>`. No member is it: the applications page never lists it, and a member's
 * revocation never reaches it.
 */
export function clientSubject(clientId: string): string {
  return `client:${clientId}`;
}

/** What the rules of this file need: no token options. */
export type GrantStoreDeps = Pick<GrantDeps, 'storage' | 'clock' | 'events'>;

/**
 * How long a revocation is remembered in the ephemeral store: longer than any consent request
 * that read the grant before the revocation can take to save it again.
 */
const REVOCATION_MARKER_MS = 3_600_000;

/** The standing (not revoked) grant of `userId` for `clientId`, or `null`. */
export async function standingGrant(
  deps: Pick<GrantDeps, 'storage'>,
  userId: string,
  clientId: string,
): Promise<GrantRecord | null> {
  const [grant] = await deps.storage.grants.list({ userId, clientId });
  return grant !== undefined && grant.revokedAt === null ? grant : null;
}

/** How often a consent saved at the same moment as another is merged with it before giving up. */
const CONSENT_MERGES = 3;

/**
 * Records the user's consent: adds `scopes` to the standing grant of the user and client, or
 * starts a new grant. Two consents saved at the same moment (two tabs, two instances) end in one
 * grant holding both: each checks what was stored and merges into it. A revocation racing a
 * consent wins: if the grant was revoked while this consent was being saved, it is revoked again
 * and the consent refused. So does a removal of the client: removing a client is an absolute
 * revocation, so a consent that read the grant before `clients.remove` deleted it and saved it
 * after, or whose client was registered again under the same id meanwhile, revokes what it saved
 * and is refused; the new registration starts with no grant. The client is read once after the
 * save for that (and once before it, unless the caller passes the client it has just read).
 *
 * Resolves the grant as saved, and the grant as it stood before (`null`: this consent started
 * it), which is what {@link withdrawConsent} needs to take the consent back.
 *
 * @throws OAuthError `access_denied` when the grant was revoked or the client removed meanwhile.
 */
export async function recordConsent(
  deps: GrantStoreDeps,
  userId: string,
  clientId: string,
  scopes: readonly string[],
  /** The client as the caller has just read it, if it has: it is not read again before the save. */
  client?: ClientRecord,
  /** The resources (RFC 8707) the user trusts the client with, added to those of the grant. */
  resources: readonly string[] = [],
  /**
   * The id of the grant this consent starts, when none stands: by default a new random one. Racing
   * callers that agreed on one (a client's first tokens, `src/grants/client-credentials.ts`) start
   * the same grant.
   */
  newGrantId: string = randomId(),
): Promise<RecordedConsent> {
  const now = deps.clock();
  const registered = client ?? (await deps.storage.clients.find(clientId));
  if (registered === null) {
    // A grant standing for an absent client was left by a consent that raced its removal and
    // failed before the check below: the retry ends it.
    const left = await standingGrant(deps, userId, clientId);
    if (left) await revokeGrant(deps, left);
    throw clientRemoved();
  }
  const merge = (into: GrantRecord): GrantRecord => {
    const merged: GrantRecord = {
      ...into,
      scopes: [...new Set([...into.scopes, ...scopes])],
      updatedAt: now,
    };
    const all = [...new Set([...(into.resources ?? []), ...resources])];
    if (all.length) merged.resources = all;
    return merged;
  };
  const standing = await standingGrant(deps, userId, clientId);
  let grant: GrantRecord = standing
    ? merge(standing)
    : {
        grantId: newGrantId,
        userId,
        clientId,
        scopes: [...new Set(scopes)],
        ...(resources.length ? { resources: [...new Set(resources)] } : {}),
        createdAt: now,
        updatedAt: now,
        revokedAt: null,
      };
  for (let merges = 0; ; merges++) {
    await deps.storage.grants.save(grant);
    const [stored] = await deps.storage.grants.list({ userId, clientId });
    const kept =
      stored !== undefined &&
      stored.grantId === grant.grantId &&
      scopes.every((scope) => stored.scopes.includes(scope)) &&
      resources.every((resource) => stored.resources?.includes(resource));
    if (kept || stored === undefined || stored.revokedAt !== null || merges === CONSENT_MERGES) break;
    grant = merge(stored);
  }
  const revoked = await deps.storage.ephemeral.get(ephemeralKeys.revokedGrant(grant.grantId), now);
  if (revoked !== null) {
    await deps.storage.grants.save({ ...grant, revokedAt: now });
    throw new OAuthError('access_denied', 'The authorization was revoked while it was being given.');
  }
  // Read again after the save: a removal that deleted the grant before it was saved leaves no
  // client, or another registration of the same id (told apart by its creation time).
  const still = await deps.storage.clients.find(clientId);
  if (still === null || still.createdAt !== registered.createdAt) {
    await revokeGrant(deps, grant);
    throw clientRemoved();
  }
  return { grant, before: standing };
}

/** A consent as {@link recordConsent} saved it. */
export interface RecordedConsent {
  /** The standing grant that holds the consent. */
  grant: GrantRecord;
  /** The grant of the user and client before it, `null` if the consent started one. */
  before: GrantRecord | null;
}

/**
 * Takes back a consent whose request could not be answered (a device request that expired, or
 * that another person answered first, while the consent was being saved), so that no grant stands
 * for what nobody received: a grant the consent started is revoked; scopes it added to a standing
 * grant are removed again. What the user trusted the client with before stays as it was.
 */
export async function withdrawConsent(deps: GrantStoreDeps, consent: RecordedConsent): Promise<void> {
  const { grant, before } = consent;
  if (before === null || before.grantId !== grant.grantId) {
    await revokeGrant(deps, grant);
    return;
  }
  const added = new Set(grant.scopes.filter((scope) => !before.scopes.includes(scope)));
  if (added.size === 0) return;
  const [current] = await deps.storage.grants.list({ userId: grant.userId, clientId: grant.clientId });
  if (current === undefined || current.grantId !== grant.grantId || current.revokedAt !== null) return;
  const scopes = current.scopes.filter((scope) => !added.has(scope));
  await deps.storage.grants.save({ ...current, scopes, updatedAt: deps.clock() });
}

const clientRemoved = () =>
  new OAuthError('access_denied', 'The client application is no longer registered.', { redirectable: false });

/**
 * Revokes a grant, absolutely: once this resolves, no token of the grant works (a token is
 * accepted only with its standing grant), no code issued under it is exchanged, a refresh in
 * flight mints nothing that works, and a consent saving the grant at the same moment cannot
 * bring it back. Resolves `true` for one caller only: of those that found the grant standing and
 * saved it revoked, the first to add its reported marker (an ephemeral `add`, after the save).
 * Requests racing to revoke the same grant (a code replayed twice at once) each revoke it, and one
 * of them reports it; a caller that failed before its save leaves the revocation, and its report,
 * to the next one. One whose `add` fails reports too: a revocation is reported at least once.
 */
export async function revokeGrant(
  deps: GrantStoreDeps,
  grant: Pick<GrantRecord, 'grantId' | 'userId' | 'clientId'>,
): Promise<boolean> {
  const now = deps.clock();
  await deps.storage.ephemeral.set(
    ephemeralKeys.revokedGrant(grant.grantId),
    '1',
    now + REVOCATION_MARKER_MS,
    now,
  );
  const [current] = await deps.storage.grants.list({ userId: grant.userId, clientId: grant.clientId });
  if (current === undefined || current.grantId !== grant.grantId || current.revokedAt !== null) return false;
  await deps.storage.grants.save({ ...current, revokedAt: now });
  // Elected after the save, not before: a caller elected first could read the grant last (already
  // revoked by another) or fail before saving, and the revocation would be reported by no one.
  return deps.storage.ephemeral
    .add(ephemeralKeys.revocationReported(grant.grantId), '1', now + REVOCATION_MARKER_MS, now)
    .catch(() => true);
}

/**
 * Ends a user's trust in an application: revokes the grant of `userId` for `clientId`, and with
 * it every token and code issued under it. The next authorization asks for consent again. The
 * applications page (`by: 'user'`) and the CLI's `grants revoke` (`by: 'operator'`) both call
 * it; it reports one `consent.revoked` event. Resolves whether there was a standing grant. A
 * client's own grant (client credentials) is never a member's to revoke: `by: 'user'` leaves it.
 */
export async function revokeApplication(
  deps: GrantStoreDeps,
  userId: string,
  clientId: string,
  by: 'user' | 'operator',
  context: EventContext = {},
): Promise<boolean> {
  if (by === 'user' && userId === clientSubject(clientId)) return false;
  const grant = await standingGrant(deps, userId, clientId);
  if (!grant || !(await revokeGrant(deps, grant))) return false;
  emit(deps, { type: 'consent.revoked', userId, clientId, grantId: grant.grantId, by, ...context });
  return true;
}

/**
 * Who the tokens of a code or of an approved device request are for, and with what scopes, as of
 * now: the very grant they were issued under must still stand (`invalid_grant` otherwise: it was
 * revoked since; a revocation racing past this read still leaves the tokens unusable), and the
 * scopes are what the consent and the client, as registered now, still allow of those asked for
 * (RFC 6749 5.1; `invalid_scope` when none remains).
 */
export async function grantedSubject(
  deps: Pick<GrantDeps, 'storage'>,
  client: ClientRecord,
  asked: { userId: string; grantId: string; scopes: readonly string[] },
): Promise<Subject> {
  return subjectOfGrant(await standingGrant(deps, asked.userId, client.clientId), client, asked);
}

/**
 * {@link grantedSubject} of a grant already read: the grant of the user and client as read with
 * the code (`null`: none, or another one), standing or not.
 */
export function subjectOfGrant(
  grant: GrantRecord | null,
  client: ClientRecord,
  asked: { userId: string; grantId: string; scopes: readonly string[] },
): Subject {
  if (grant === null || grant.revokedAt !== null || grant.grantId !== asked.grantId) {
    throw new OAuthError('invalid_grant', 'The authorization was revoked.');
  }
  const scopes = standingScopes(asked.scopes, grant, client);
  if (scopes.length === 0 && asked.scopes.length > 0) {
    throw new OAuthError('invalid_scope', 'None of the scopes asked for remains with this client.');
  }
  return { clientId: client.clientId, userId: asked.userId, scopes, grantId: asked.grantId };
}
