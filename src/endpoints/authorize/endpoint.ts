import { endpoint } from '../shared/pipeline.js';
import { identifyUser } from '../shared/identify.js';
import { loadSession } from '../shared/load-session.js';
import { continueAuthorization, loadActiveClient, readPending } from './continue.js';
import {
  checkAuthorizationRequest,
  checkIdTokenHint,
  parseAuthorizationRequest,
  loadClient,
  type AuthorizeContext,
} from './request.js';

/**
 * The authorization endpoint (RFC 6749 3.1): `GET /oauth/authorize`. Validates the request, then
 * sends the browser back to the client at once, or to login or consent.
 *
 * @see RFC 6749 sections 4.1.1, 4.1.2, 4.2.1, 4.2.2
 */
export const authorizeEndpoint = endpoint<AuthorizeContext>({
  name: 'authorization',
  method: 'GET',
  path: '/oauth/authorize',
  kind: 'page',
  steps: [
    parseAuthorizationRequest,
    loadSession,
    identifyUser,
    loadClient,
    checkAuthorizationRequest,
    checkIdTokenHint,
    continueAuthorization,
  ],
});

/**
 * `GET /oauth/authorize/resume`: the authorization in progress, continued after a login (the
 * login answers with a redirect here, so the consent page survives a reload), a failed login,
 * or a switch of account.
 */
export const resumeEndpoint = endpoint<AuthorizeContext>({
  name: 'authorization_resume',
  method: 'GET',
  path: '/oauth/authorize/resume',
  kind: 'page',
  steps: [loadSession, identifyUser, readPending, loadActiveClient, continueAuthorization],
});
