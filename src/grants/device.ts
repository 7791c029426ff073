import { randomInt } from 'node:crypto';
import { narrowedResources, NO_RESOURCES } from '../rules/resources.js';
import { generateSecret, hashSecret } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import type { EventContext } from '../events/emit.js';
import { ephemeralKeys, type DeviceDecision, type DevicePoll, type StoredDevice } from '../storage/keys.js';
import type { AccountClaims, ClientRecord, GrantRecord } from '../storage/types.js';
import type { GrantDeps } from './deps.js';
import { grantedSubject, recordConsent, withdrawConsent, type GrantStoreDeps } from './grant.js';
import { issueBehindCommit, type TokenResponse } from './tokens.js';

/**
 * The device authorization grant (RFC 8628): a device without a browser asks for a device code
 * and a user code; the person types the user code on the verification page of another device,
 * signs in and approves; the device polls the token endpoint until then.
 *
 * Everything lives in the ephemeral store, so two instances share a flow: the request under the
 * device code's hash (kept an hour past its expiry, so a late poll learns `expired_token`), the
 * user code until the person answers, the answer (added once) and the pace of the polling.
 */

/** The grant type of RFC 8628, as the token endpoint's `grant_type`. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** How long a device request is kept past its expiry: a poll then still learns `expired_token`. */
const EXPIRED_KEPT_MS = 3_600_000;

/**
 * The user code alphabet of RFC 8628 6.1: 20 consonants, no vowels (no words) and nothing that
 * reads as another character (no 0/O, 1/I/L confusions: there are no digits).
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** Eight characters: 20^8, about 2^34.6 codes, shown as `WDJB-MJHT`. */
const USER_CODE_LENGTH = 8;

/** How many times a fresh user code is drawn when the one drawn is live already. */
const USER_CODE_DRAWS = 5;

/** A fresh user code, as shown: `WDJB-MJHT`. */
function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A user code as typed, in its canonical form (`WDJB-MJHT`), or `null` when it cannot be one:
 * case does not matter, and dashes and spaces are ignored (RFC 8628 6.1).
 */
export function normalizeUserCode(typed: string): string | null {
  if (typed.length > 64) return null;
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== USER_CODE_LENGTH || [...letters].some((c) => !ALPHABET.includes(c))) return null;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** The device authorization response (RFC 8628 3.2). */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** What {@link startDeviceAuthorization} needs besides the grant deps. */
export interface DeviceSettings {
  /** Lifetime of the device and user codes, in seconds. */
  codeTtl: number;
  /** The polling interval, in seconds. */
  interval: number;
  /** The verification page's URL. */
  verificationUri: string;
}

/**
 * Starts a device authorization (RFC 8628 3.1, 3.2) for `client` and the scopes it asked for
 * (checked by the caller): a device code (a secret, stored hashed) and a user code a person can
 * type, each live for `codeTtl`.
 */
export async function startDeviceAuthorization(
  deps: GrantDeps,
  client: ClientRecord,
  asked: { scopes: string[]; resources: string[] },
  settings: DeviceSettings,
): Promise<DeviceAuthorizationResponse> {
  const now = deps.clock();
  const expiresAt = now + settings.codeTtl * 1000;
  const deviceCode = generateSecret();
  const deviceHash = hashSecret(deviceCode);
  const userCode = await claimUserCode(deps, deviceHash, expiresAt, now);
  const stored: StoredDevice = {
    clientId: client.clientId,
    scopes: asked.scopes,
    ...(asked.resources.length ? { resources: asked.resources } : {}),
    userCode,
    createdAt: now,
    expiresAt,
    interval: settings.interval,
  };
  await deps.storage.ephemeral.set(
    ephemeralKeys.device(deviceHash),
    JSON.stringify(stored),
    expiresAt + EXPIRED_KEPT_MS,
    now,
  );
  const complete = new URL(settings.verificationUri);
  complete.searchParams.set('user_code', userCode);
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: settings.verificationUri,
    verification_uri_complete: complete.href,
    expires_in: settings.codeTtl,
    interval: settings.interval,
  };
}

/** Draws a user code no live request holds, and keeps it for `deviceHash` until `expiresAt`. */
async function claimUserCode(
  deps: GrantDeps,
  deviceHash: string,
  expiresAt: number,
  now: number,
): Promise<string> {
  for (let draw = 0; draw < USER_CODE_DRAWS; draw++) {
    const userCode = newUserCode();
    const key = ephemeralKeys.deviceUserCode(hashSecret(userCode));
    if (await deps.storage.ephemeral.add(key, deviceHash, expiresAt, now)) return userCode;
  }
  // Five live codes drawn in a row among 2^34.6: the store is full of them, or not random.
  throw new Error('no free user code after five draws');
}

/** A device request waiting for the person's answer, found by the user code typed. */
export interface LiveDevice {
  /** The hash of its device code. */
  hash: string;
  request: StoredDevice;
}

/**
 * The live device request of a user code as typed (canonical form, see {@link normalizeUserCode}),
 * or `null`: unknown, expired, or answered already.
 */
export async function findByUserCode(
  deps: Pick<GrantDeps, 'storage' | 'clock'>,
  userCode: string,
): Promise<LiveDevice | null> {
  const now = deps.clock();
  const hash = await deps.storage.ephemeral.get(ephemeralKeys.deviceUserCode(hashSecret(userCode)), now);
  if (hash === null) return null;
  const [stored, decided] = await Promise.all([
    deps.storage.ephemeral.get(ephemeralKeys.device(hash), now),
    deps.storage.ephemeral.get(ephemeralKeys.deviceDecision(hash), now),
  ]);
  if (stored === null || decided !== null) return null;
  const request = JSON.parse(stored) as StoredDevice;
  return now < request.expiresAt ? { hash, request } : null;
}

/**
 * Records the person's answer to a device request: once (the first answer wins, a second is
 * refused), and the user code stops working. Resolves `false` when the request was answered
 * already or has expired.
 */
export async function answerDevice(
  deps: Pick<GrantDeps, 'storage' | 'clock'>,
  device: LiveDevice,
  decision: DeviceDecision,
): Promise<boolean> {
  const now = deps.clock();
  if (now >= device.request.expiresAt) return false;
  const added = await deps.storage.ephemeral.add(
    ephemeralKeys.deviceDecision(device.hash),
    JSON.stringify(decision),
    device.request.expiresAt + EXPIRED_KEPT_MS,
    now,
  );
  if (!added) return false;
  await deps.storage.ephemeral.delete(ephemeralKeys.deviceUserCode(hashSecret(device.request.userCode)));
  return true;
}

/** Who approves a device request, as the verification page's sign-in knows them. */
export interface DeviceApprover {
  userId: string;
  authTime?: number;
  claims?: AccountClaims;
}

/**
 * A person's approval of a device request (RFC 8628 3.3): their consent is recorded as a browser's
 * is (the device's grant is on the applications page, and revoking it ends the device's tokens),
 * then the answer is saved for the device's next poll. Saving the answer is the commit point: when
 * it cannot be saved (the request expired meanwhile, or someone else answered it first), the
 * consent is taken back ({@link withdrawConsent}), so no grant stands that no device received.
 * Resolves the grant, or `null` when the request could not be answered.
 */
export async function approveDevice(
  deps: GrantStoreDeps,
  device: LiveDevice,
  approver: DeviceApprover,
  client: ClientRecord,
): Promise<GrantRecord | null> {
  const { scopes, resources = [] } = device.request;
  const consent = await recordConsent(deps, approver.userId, client.clientId, scopes, client, resources);
  const { grantId } = consent.grant;
  if (await answerDevice(deps, device, { approved: true, ...approver, grantId })) return consent.grant;
  await withdrawConsent(deps, consent);
  return null;
}

/** The device code a poll presents, with its rows as the token endpoint's load step read them. */
export interface DevicePollRows {
  hash: string;
  /** Its {@link StoredDevice}, `null` if unknown, taken, or pruned. */
  request: string | null;
  /** Its {@link DeviceDecision}, `null` while unanswered. */
  decision: string | null;
  /** Its {@link DevicePoll}, `null` before the first poll. */
  poll: string | null;
}

/** The parameters of a poll: the rows, and the ID token to answer with (OpenID Connect). */
export interface DevicePollParams {
  rows: DevicePollRows;
  /** The `resource` the poll names (RFC 8707 2.2): the one the device asked for. */
  resource?: string;
  idToken?: (
    subject: { clientId: string; userId: string; authTime?: number; claims?: AccountClaims },
    scopes: string[],
    now: number,
  ) => Promise<string | undefined>;
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/**
 * Answers a device's poll of the token endpoint (RFC 8628 3.4, 3.5): `slow_down` when it polls
 * before its interval is over (the interval then grows by 5 seconds), `authorization_pending`
 * until the person answers, `access_denied` when they deny, `expired_token` once the code has
 * expired; and once approved, the tokens, as a code exchange issues them. The device code is
 * taken last: the commit point, as for codes; a poll that loses the race, or comes after, gets
 * `invalid_grant`.
 */
export async function pollDevice(
  deps: GrantDeps,
  client: ClientRecord,
  params: DevicePollParams,
  context: () => EventContext,
): Promise<TokenResponse> {
  const now = deps.clock();
  const { rows } = params;
  if (rows.request === null) throw invalidGrant('The device code is invalid.');
  const request = JSON.parse(rows.request) as StoredDevice;
  if (request.clientId !== client.clientId)
    throw invalidGrant('The device code was issued to another client.');
  if (now >= request.expiresAt) {
    throw new OAuthError('expired_token', 'The device code has expired: start the sign-in again.');
  }
  const pace = rows.poll === null ? null : (JSON.parse(rows.poll) as DevicePoll);
  const interval = pace?.interval ?? request.interval;
  if (pace !== null && now < pace.next) {
    // RFC 8628 3.5: the interval grows by 5 seconds, for this and every later request.
    await setPace(
      deps,
      rows.hash,
      request,
      { interval: interval + 5, next: now + (interval + 5) * 1000 },
      now,
    );
    throw new OAuthError('slow_down', `Polled too often: wait ${interval + 5} seconds between requests.`);
  }
  const decision = rows.decision === null ? null : (JSON.parse(rows.decision) as DeviceDecision);
  if (decision === null) {
    await setPace(deps, rows.hash, request, { interval, next: now + interval * 1000 }, now);
    throw new OAuthError('authorization_pending', 'The person has not answered yet.');
  }
  if (!decision.approved) {
    throw new OAuthError('access_denied', 'The person denied the request.', { httpStatus: 400 });
  }
  // As for a code: the grant must still stand, the scopes are what it and the client still allow.
  const granted = await grantedSubject(deps, client, { ...decision, scopes: request.scopes });
  const resources = narrowedResources(deps.resources ?? NO_RESOURCES, client, request.resources ?? [], {
    value: params.resource,
    repeated: false,
  });
  const subject = resources.length ? { ...granted, resources } : granted;
  const idToken = await params.idToken?.({ ...decision, clientId: client.clientId }, subject.scopes, now);
  // The commit point: exactly one poll takes the device code; the tokens of a loser are never
  // handed out.
  return issueBehindCommit(
    deps,
    { grantType: 'device_code', client, subject, idToken, now, authTime: decision.authTime },
    async () => {
      if ((await deps.storage.ephemeral.take(ephemeralKeys.device(rows.hash), now)) === null) {
        throw invalidGrant('The device code has already been used.');
      }
    },
    context,
  );
}

function setPace(
  deps: GrantDeps,
  hash: string,
  request: StoredDevice,
  pace: DevicePoll,
  now: number,
): Promise<void> {
  return deps.storage.ephemeral.set(
    ephemeralKeys.devicePoll(hash),
    JSON.stringify(pace),
    request.expiresAt + EXPIRED_KEPT_MS,
    now,
  );
}
