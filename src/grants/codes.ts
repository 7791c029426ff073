import { createHash } from 'node:crypto';
import { generateSecret, hashSecret } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import { emit, type EventContext } from '../events/emit.js';
import { ephemeralKeys, type StoredCode, type UsedCode } from '../storage/keys.js';
import type { ClientRecord, GrantRecord } from '../storage/types.js';
import { pkceRequired } from '../rules/client-kind.js';
import type { GrantDeps } from './deps.js';
import { revokeGrant, subjectOfGrant } from './grant.js';
import { issueBehindCommit, type TokenResponse } from './tokens.js';
import { narrowedResources, NO_RESOURCES } from '../rules/resources.js';

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** Creates a single-use authorization code under a standing grant; resolves the plaintext, shown once. */
export async function issueCode(
  deps: GrantDeps,
  fields: Omit<StoredCode, 'createdAt' | 'expiresAt'>,
): Promise<string> {
  const code = generateSecret();
  const now = deps.clock();
  const expiresAt = now + deps.options.tokens.codeTtl * 1000;
  const stored: StoredCode = {
    clientId: fields.clientId,
    userId: fields.userId,
    redirectUri: fields.redirectUri,
    scopes: fields.scopes,
    ...(fields.resources?.length ? { resources: fields.resources } : {}),
    grantId: fields.grantId,
    codeChallenge: fields.codeChallenge,
    codeChallengeMethod: fields.codeChallengeMethod,
    ...(fields.nonce === undefined ? {} : { nonce: fields.nonce }),
    ...(fields.authTime === undefined ? {} : { authTime: fields.authTime }),
    ...(fields.claims === undefined ? {} : { claims: fields.claims }),
    createdAt: now,
    expiresAt,
  };
  await deps.storage.ephemeral.set(
    ephemeralKeys.code(hashSecret(code)),
    JSON.stringify(stored),
    expiresAt,
    now,
  );
  return code;
}

/**
 * The parameters of a code exchange (RFC 6749 4.1.3, RFC 7636 4.5), with the code as the request
 * read it: its hash, the entry stored under `ephemeralKeys.code(hash)` then (`null`: none), and
 * the grant that entry names, read with it (`readRows`' `grantOf`).
 */
export interface CodeExchange {
  code: { hash: string; entry: string | null; grant: GrantRecord | null };
  redirectUri: string;
  codeVerifier: string | undefined;
  /** The `resource` the request names (RFC 8707 2.2): one the code was issued for. */
  resource?: string;
  /**
   * The ID token to answer with (OpenID Connect), of the code and the scopes granted, or
   * `undefined` for none. Made before the commit point: a failure leaves the code usable.
   */
  idToken?: (code: StoredCode, scopes: string[], now: number) => Promise<string | undefined>;
}

/**
 * Exchanges an authorization code for an access and a refresh token (RFC 6749 4.1.3).
 *
 * The tokens are saved first (one `tokens.saveAll`) and the code is replaced by its used marker
 * last (`ephemeral.replace`, compare and set): that is the commit point. A failure before it
 * leaves the code usable, so the client's retry succeeds; exactly one of racing exchanges
 * replaces the code, and a loser revokes the grant, with what it saved. A code presented after
 * its exchange revokes its grant (RFC 6749 4.1.2); so does one whose grant was revoked.
 */
export async function exchangeCode(
  deps: GrantDeps,
  client: ClientRecord,
  params: CodeExchange,
  context: () => EventContext,
): Promise<TokenResponse> {
  const now = deps.clock();
  const { hash: codeHash, entry } = params.code;
  const read = entry === null ? null : (JSON.parse(entry) as StoredCode | UsedCode);
  if (read === null || 'used' in read) {
    // A used code revokes its grant when its own client presents it again (RFC 6749 4.1.2); one
    // presented by another client is bound to someone else (4.1.3) and changes nothing.
    if (read !== null && read.clientId === client.clientId) await replayed(deps, read, client, context);
    throw invalidGrant('The authorization code is invalid.');
  }
  const [code, unused] = [read, entry!];
  checkCode(code, client, params, now, deps.options.profile);
  const resources = narrowedResources(deps.resources ?? NO_RESOURCES, client, code.resources ?? [], {
    value: params.resource,
    repeated: false,
  });
  const granted = subjectOfGrant(params.code.grant, client, code);
  const subject = resources.length ? { ...granted, resources } : granted;
  const idToken = await params.idToken?.(code, subject.scopes, now);
  // The tokens first, the code's replacement by its used marker last: that is the commit point,
  // one atomic step, so no moment exists in which the code is gone and the marker absent, and a
  // replay always finds one or the other. A retry whose replacement went through but whose answer
  // was lost is therefore a replay: it revokes the grant, with the tokens nobody received.
  const issue = {
    grantType: 'authorization_code' as const,
    client,
    subject,
    idToken,
    now,
    authTime: code.authTime,
  };
  return issueBehindCommit(
    deps,
    issue,
    async () => {
      const used: UsedCode = {
        used: true,
        grantId: code.grantId,
        clientId: code.clientId,
        userId: code.userId,
      };
      const key = ephemeralKeys.code(codeHash);
      if (!(await deps.storage.ephemeral.replace(key, unused, JSON.stringify(used), code.expiresAt, now))) {
        await replayed(deps, code, client, context);
        throw invalidGrant('The authorization code has already been used.');
      }
    },
    context,
  );
}

/** The checks of RFC 6749 4.1.3 and RFC 7636 4.6 on a code that is still unused. */
function checkCode(
  code: StoredCode,
  client: ClientRecord,
  params: CodeExchange,
  now: number,
  profile: 'oauth2' | 'oauth2.1' = 'oauth2',
): void {
  if (code.clientId !== client.clientId)
    throw invalidGrant('The authorization code was issued to another client.');
  if (now >= code.expiresAt) throw invalidGrant('The authorization code has expired.');
  if (code.redirectUri !== params.redirectUri) {
    throw invalidGrant('redirect_uri differs from the one of the authorization request.');
  }
  const verifier = params.codeVerifier;
  if (code.codeChallenge !== null) {
    if (verifier === undefined) throw invalidGrant('code_verifier is required for this code.');
    const computed = createHash('sha256').update(verifier).digest('base64url');
    if (computed !== code.codeChallenge) throw invalidGrant('code_verifier does not match.');
  } else if (verifier !== undefined) {
    // RFC 9700 4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
    throw invalidGrant('This code was issued without a code_challenge.');
  } else if (pkceRequired(client, profile)) {
    throw invalidGrant('This client must use PKCE.');
  }
}

/**
 * A code used twice: revoke its grant (RFC 6749 4.1.2) and report it, once: a code whose grant
 * was already revoked (by an earlier replay, or before its exchange was refused) revokes and
 * reports nothing.
 */
async function replayed(
  deps: GrantDeps,
  code: Omit<UsedCode, 'used'>,
  presentedBy: ClientRecord,
  context: () => EventContext,
): Promise<void> {
  if (!(await revokeGrant(deps, code))) return;
  emit(deps, {
    type: 'code.replayed',
    clientId: code.clientId,
    presentedBy: presentedBy.clientId,
    userId: code.userId,
    grantId: code.grantId,
    ...context(),
  });
}
