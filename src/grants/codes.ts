import { createHash } from 'node:crypto';
import { generateSecret, hashSecret } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import { emit, listened, type EventContext } from '../events/emit.js';
import { ephemeralKeys, type StoredCode, type UsedCode } from '../storage/keys.js';
import type { BatchOperation, ClientRecord } from '../storage/types.js';
import type { GrantDeps } from './deps.js';
import { revokeGrant } from './grant.js';
import { runBatch } from './batch.js';
import { newToken, tokenResponse, type TokenResponse } from './tokens.js';

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** A new authorization code, not stored yet: its plaintext, shown once, and its storage write. */
export interface NewCode {
  code: string;
  write: Extract<BatchOperation, { op: 'ephemeral.set' }>;
}

/** A new single-use authorization code under a grant, to be stored with `write`. */
export function newCode(deps: GrantDeps, fields: Omit<StoredCode, 'createdAt' | 'expiresAt'>): NewCode {
  const code = generateSecret();
  const now = deps.clock();
  const expiresAt = now + deps.options.tokens.codeTtl * 1000;
  const stored: StoredCode = {
    clientId: fields.clientId,
    userId: fields.userId,
    redirectUri: fields.redirectUri,
    scopes: fields.scopes,
    grantId: fields.grantId,
    codeChallenge: fields.codeChallenge,
    codeChallengeMethod: fields.codeChallengeMethod,
    createdAt: now,
    expiresAt,
  };
  const key = ephemeralKeys.code(hashSecret(code));
  return { code, write: { op: 'ephemeral.set', key, value: JSON.stringify(stored), expiresAt, now } };
}

/** Creates a single-use authorization code under a standing grant; resolves the plaintext, shown once. */
export async function issueCode(
  deps: GrantDeps,
  fields: Omit<StoredCode, 'createdAt' | 'expiresAt'>,
): Promise<string> {
  const { code, write } = newCode(deps, fields);
  await deps.storage.ephemeral.set(write.key, write.value, write.expiresAt, write.now);
  return code;
}

/** The parameters of a code exchange (RFC 6749 4.1.3, RFC 7636 4.5). */
export interface CodeExchange {
  code: string;
  redirectUri: string;
  codeVerifier: string | undefined;
}

/**
 * Exchanges an authorization code for an access and a refresh token (RFC 6749 4.1.3).
 *
 * The tokens are saved first and the code is taken last: taking it is the commit point. A
 * failure before it leaves the code usable, so the client's retry succeeds; exactly one of racing
 * exchanges takes the code, and a loser revokes the grant, with what it saved. A code presented
 * after its exchange revokes its grant (RFC 6749 4.1.2); so does one whose grant was revoked.
 */
export async function exchangeCode(
  deps: GrantDeps,
  client: ClientRecord,
  params: CodeExchange,
  context: () => EventContext,
): Promise<TokenResponse> {
  const now = deps.clock();
  const codeHash = hashSecret(params.code);
  const raw = await deps.storage.ephemeral.get(ephemeralKeys.code(codeHash), now);
  if (raw === null) {
    const used = await deps.storage.ephemeral.get(ephemeralKeys.usedCode(codeHash), now);
    if (used !== null) await replayed(deps, JSON.parse(used) as UsedCode, client, context);
    throw invalidGrant('The authorization code is invalid.');
  }
  const code = JSON.parse(raw) as StoredCode;
  checkCode(code, client, params, now);
  const subject = {
    clientId: client.clientId,
    userId: code.userId,
    scopes: code.scopes,
    grantId: code.grantId,
  };
  const access = newToken(deps, 'access_token', subject, 'authorization_code', now);
  const refresh = newToken(deps, 'refresh_token', subject, 'authorization_code', now);
  // The code's grant read with the writes; the tokens and the used-code marker first, the take
  // last: with the adapter's batch, in one transaction (one round trip on PostgreSQL), which
  // begins with a write (on SQLite it takes the write lock at once). Tokens
  // saved for a grant that no longer stands never work (a token works only while its very grant
  // stands), and its code is spent: it could never be exchanged again. The marker counts only
  // once the code is gone, so one written by an exchange that failed before its take changes
  // nothing; written with the take, it leaves no moment in which a replay goes unnoticed. A retry
  // whose take went through but whose answer was lost is therefore a replay too: it revokes the
  // grant, with the tokens nobody received.
  const used: UsedCode = { grantId: code.grantId, clientId: code.clientId, userId: code.userId };
  const [, , grant, , taken] = await runBatch(deps.storage, [
    { op: 'tokens.save', token: access.record },
    { op: 'tokens.save', token: refresh.record },
    { op: 'grants.find', userId: code.userId, clientId: code.clientId },
    {
      op: 'ephemeral.set',
      key: ephemeralKeys.usedCode(codeHash),
      value: JSON.stringify(used),
      expiresAt: code.expiresAt,
      now,
    },
    { op: 'ephemeral.take', key: ephemeralKeys.code(codeHash), now },
  ]);
  if (grant === null || grant.revokedAt !== null || grant.grantId !== code.grantId) {
    throw invalidGrant('The authorization was revoked.');
  }
  if (taken === null) {
    await replayed(deps, code, client, context);
    throw invalidGrant('The authorization code has already been used.');
  }

  if (listened(deps, 'token.issued')) {
    emit(deps, {
      type: 'token.issued',
      grantType: 'authorization_code',
      ...subject,
      refreshToken: true,
      ...context(),
    });
  }
  return tokenResponse(access, deps, refresh.token);
}

/** The checks of RFC 6749 4.1.3 and RFC 7636 4.6 on a code that is still unused. */
function checkCode(code: StoredCode, client: ClientRecord, params: CodeExchange, now: number): void {
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
  } else if (client.requirePkce) {
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
  code: UsedCode,
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
