import type { Request, Response } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext, listened } from '../../events/emit.js';
import { generateSecret } from '../../crypto/secrets.js';
import type { AuthorizationServer } from '../../server.js';
import {
  clearPending,
  writableSessionState,
  type PendingAuthorization,
  type SessionUser,
} from '../../session/state.js';
import type { ClientRecord, GrantRecord } from '../../storage/types.js';
import { issueCode, saveAccessToken, standingGrant } from '../../grants/index.js';
import { signOutForm } from './logout.js';
import { redirectToClient, targetOf } from './redirect.js';
import { scopesCover } from '../../scopes/scopes.js';

/**
 * The step after login: redirect at once if the user already trusts the client with these
 * scopes, otherwise show the consent page. `known` is the client if the caller has just read it;
 * otherwise it is read again, since it may have been disabled while the user was logging in.
 */
export async function consentOrComplete(
  server: AuthorizationServer,
  req: Request,
  res: Response,
  user: SessionUser,
  pending: PendingAuthorization,
  known?: ClientRecord,
): Promise<void> {
  const client = known ?? (await activeClient(server, pending.clientId));
  const grant = await standingGrant(server, user.id, client.clientId);
  if (grant && scopesCover(grant.scopes, pending.scopes)) {
    return complete(server, req, res, user, pending, grant);
  }
  const state = writableSessionState(req, server.clock());
  state.csrf = generateSecret();
  res.type('html').send(
    server.pages.consent({
      applicationName: client.applicationName,
      clientId: client.clientId,
      scopes: pending.scopes.map((name) => ({ name, description: server.options.scopes[name] ?? '' })),
      action: `${server.urls.authorization}/decision`,
      fields: { transaction: pending.id, csrf: state.csrf },
      signedInAs: user.identifier,
      switchAccount: signOutForm(server, req, 'switch'),
    }),
  );
}

/**
 * The client of a pending request, read again: it may have been disabled while the user was
 * logging in or reading the consent page.
 */
export async function activeClient(server: AuthorizationServer, clientId: string): Promise<ClientRecord> {
  const client = await server.storage.clients.find(clientId);
  if (!client || client.disabled) {
    throw new OAuthError('access_denied', 'The client application is no longer registered.', {
      redirectable: false,
    });
  }
  return client;
}

/** Issues the code or token of the pending request and sends the browser back to the client. */
export async function complete(
  server: AuthorizationServer,
  req: Request,
  res: Response,
  user: SessionUser,
  pending: PendingAuthorization,
  grant: GrantRecord,
): Promise<void> {
  clearPending(req);
  return issueAndRedirect(server, req, res, user, pending, grant);
}

/**
 * Issues the code or token of an authorization request the user has approved (now or before)
 * and sends the browser back to the client; the session is the caller's business.
 */
export async function issueAndRedirect(
  server: AuthorizationServer,
  req: Request,
  res: Response,
  user: SessionUser,
  pending: PendingAuthorization,
  grant: GrantRecord,
): Promise<void> {
  const { grantId } = grant;
  const subject = { clientId: pending.clientId, userId: user.id, scopes: pending.scopes };
  if (pending.responseType === 'code') {
    const code = await issueCode(server, {
      ...subject,
      grantId,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      codeChallengeMethod: pending.codeChallengeMethod,
    });
    if (listened(server, 'code.issued')) {
      const pkce = pending.codeChallenge !== null;
      emit(server, { type: 'code.issued', ...subject, grantId, pkce, ...eventContext(req) });
    }
    return redirectToClient(res, targetOf(server, pending), { code });
  }
  const access = await saveAccessToken(server, { ...subject, grantId }, 'implicit', server.clock());
  emit(server, {
    type: 'token.issued',
    grantType: 'implicit',
    ...subject,
    grantId,
    refreshToken: false,
    ...eventContext(req),
  });
  redirectToClient(res, targetOf(server, pending), {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: String(server.options.tokens.accessTokenTtl),
    ...(pending.scopes.length ? { scope: pending.scopes.join(' ') } : {}),
  });
}
