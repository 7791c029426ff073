import { endpoint } from '../shared/pipeline.js';
import { loadSession } from '../shared/load-session.js';
import {
  checkLoginInProgress,
  chooseAccount,
  findOrCreateUser,
  readAccountProfile,
  signIn,
  verifyAtProvider,
  type CallbackContext,
} from './callback.js';
import { chooseProvider, startAtProvider, type StartContext } from './start.js';

/**
 * `GET /oauth/login?openid_identifier=…`: starts the login at one of the configured providers,
 * for the authorization in progress or (`for=applications`) the authorized-applications page.
 */
export const loginEndpoint = endpoint<StartContext>({
  name: 'login',
  method: 'GET',
  path: '/oauth/login',
  kind: 'page',
  steps: [
    loadSession,
    chooseProvider,
    startAtProvider,
    readAccountProfile,
    findOrCreateUser,
    chooseAccount,
    signIn,
  ],
});

/**
 * `GET /oauth/login/callback`: the provider's answer. The login it completes must be the one this
 * browser started, for the request it was started for; the user is signed in with a new session
 * id, and the browser goes on (303) to the consent page or the applications page.
 */
export const callbackEndpoint = endpoint<CallbackContext>({
  name: 'login_callback',
  method: 'GET',
  path: '/oauth/login/callback',
  kind: 'page',
  steps: [
    loadSession,
    checkLoginInProgress,
    verifyAtProvider,
    readAccountProfile,
    findOrCreateUser,
    chooseAccount,
    signIn,
  ],
});
