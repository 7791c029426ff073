import { randomId, hashSecret } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { ServerEvents } from '../../events/emitter.js';
import type { ServerEvent } from '../../events/types.js';
import {
  exchangeCode,
  issueCode,
  recordConsent,
  refreshAccessToken,
  revokeApplication,
  usable,
  type GrantDeps,
  type TokenResponse,
} from '../../grants/index.js';
import type { ClientRecord, GrantRecord, Storage, TokenRecord } from '../../storage/types.js';
import { ephemeralKeys } from '../../storage/keys.js';
import { readRows } from '../../storage/read.js';
import { instrumentStorage } from './instrument.js';
import { clientRecord, freshId } from './fixtures.js';

/*
 * The library's rules (src/grants) driven over the adapter under test, as the token endpoint and
 * the applications page drive them: what the rule tests, the fault sweeps and the races share.
 */

const SILENT = { warn() {}, error() {} };

/** Grant deps over `storage`, reporting every event into `events`. */
export function grantDeps(storage: Storage, rotate: boolean, events: ServerEvent[] = []): GrantDeps {
  const serverEvents = new ServerEvents(() => SILENT);
  serverEvents.on('*', (event) => void events.push(event));
  return {
    storage,
    clock: () => Date.now(),
    options: { tokens: { accessTokenTtl: 3600, codeTtl: 600, rotateRefreshTokens: rotate } },
    events: serverEvents,
  };
}

/** A registered client, a user, and the grant of the user's consent, made through the library. */
export interface Enrolment {
  client: ClientRecord;
  userId: string;
  grant: GrantRecord;
}

/** Registers a client (unless one is given), logs a user in and records their consent. */
export async function enrol(
  storage: Storage,
  putClient: (client: ClientRecord) => Promise<void>,
  client?: ClientRecord,
): Promise<Enrolment> {
  const now = Date.now();
  if (!client) {
    client = clientRecord(now, {
      scopes: ['realms:read', 'profile'],
      defaultScopes: null,
      requirePkce: false,
    });
    await putClient(client);
  }
  const identity = { identifier: `https://id.example/${freshId('user')}`, provider: 'Example' };
  const user = await storage.users.findOrCreate(identity, randomId(), now);
  const { grant } = await recordConsent(grantDeps(storage, false), user.id, client.clientId, [
    'realms:read',
    'profile',
  ]);
  return { client, userId: user.id, grant };
}

const NO_CONTEXT = () => ({});

/** Issues a code under the enrolment's grant, as the authorization endpoint does. */
export function issue(deps: GrantDeps, enrolment: Enrolment): Promise<string> {
  return issueCode(deps, {
    clientId: enrolment.client.clientId,
    userId: enrolment.userId,
    redirectUri: enrolment.client.redirectUri,
    scopes: enrolment.grant.scopes,
    grantId: enrolment.grant.grantId,
    codeChallenge: null,
    codeChallengeMethod: null,
  });
}

/** The token endpoint's `authorization_code` grant, for the enrolment's client. */
export async function exchange(deps: GrantDeps, enrolment: Enrolment, code: string): Promise<TokenResponse> {
  const hash = hashSecret(code);
  const key = ephemeralKeys.code(hash);
  // As the token endpoint's load step reads it: the code and the grant it names.
  const rows = await readRows(deps.storage, { ephemeral: [key], grantOf: key }, deps.clock());
  const entry = rows.ephemeral[key] ?? null;
  return exchangeCode(
    deps,
    enrolment.client,
    {
      code: { hash, entry, grant: rows.grant },
      redirectUri: enrolment.client.redirectUri,
      codeVerifier: undefined,
    },
    NO_CONTEXT,
  );
}

/** The token endpoint's `refresh_token` grant, for the enrolment's client. */
export async function refresh(
  deps: GrantDeps,
  enrolment: Enrolment,
  refreshToken: string,
): Promise<TokenResponse> {
  const found = await deps.storage.tokens.find(hashSecret(refreshToken));
  return refreshAccessToken(deps, enrolment.client, { refreshToken, found, scope: undefined }, NO_CONTEXT);
}

/** The operator's `grants revoke` (and the applications page's revoke button). */
export function revoke(deps: GrantDeps, enrolment: Enrolment): Promise<boolean> {
  return revokeApplication(deps, enrolment.userId, enrolment.client.clientId, 'operator');
}

/** Whether the token with this plaintext works now, read through the adapter. */
export async function works(storage: Storage, plaintext: string): Promise<boolean> {
  const found = await storage.tokens.find(hashSecret(plaintext));
  return found !== null && usable(found, Date.now());
}

/** The plaintexts of a token response. */
export function tokensOf(response: TokenResponse): string[] {
  return response.refresh_token === undefined
    ? [response.access_token]
    : [response.access_token, response.refresh_token];
}

/** Every token saved through a view of `storage`, so that a test can check the ones never returned. */
export interface TokenLedger {
  storage: Storage;
  saved: TokenRecord[];
  /** The saved tokens that work now, of a grant or a client. */
  working(filter: { grantId?: string; clientId?: string }): Promise<TokenRecord[]>;
}

/** A view of `storage` that records every token saved through it. */
export function tokenLedger(storage: Storage): TokenLedger {
  const saved: TokenRecord[] = [];
  return {
    saved,
    storage: instrumentStorage(storage, async (call, run) => {
      const result = await run();
      if (call.method === 'tokens.save') saved.push(call.args[0] as TokenRecord);
      if (call.method === 'tokens.saveAll') saved.push(...(call.args[0] as TokenRecord[]));
      return result;
    }),
    async working(filter) {
      const now = Date.now();
      const hashes = new Set(
        saved
          .filter(
            (t) =>
              (filter.grantId === undefined || t.grantId === filter.grantId) &&
              (filter.clientId === undefined || t.clientId === filter.clientId),
          )
          .map((t) => t.tokenHash),
      );
      const out: TokenRecord[] = [];
      for (const hash of hashes) {
        const found = await storage.tokens.find(hash);
        if (found && usable(found, now)) out.push(found.token);
      }
      return out;
    },
  };
}

/** The settled outcome of a request. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The outcome of `promise`, which never rejects. */
export function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** `invalid_grant`, as the token endpoint answers a refused code or refresh token. */
export function isInvalidGrant(error: unknown): boolean {
  return error instanceof OAuthError && error.code === 'invalid_grant';
}

/** Events that mean the library took a request for a replay. */
export function replays(events: readonly ServerEvent[]): ServerEvent[] {
  return events.filter((event) => event.type === 'code.replayed' || event.type === 'refresh_token.reused');
}

/** Describes an error for a failure message. */
export function describeError(error: unknown): string {
  if (error instanceof OAuthError) return `OAuthError ${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
