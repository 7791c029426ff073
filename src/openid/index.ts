/**
 * `openid-oauth-bridge/openid`: the OpenID 2.0 relying party the server logs users in with, for
 * an app that uses it on its own (its own passport setup, say) or writes its own provider preset.
 * An app mounting the server needs none of it: `createAuthorizationServer` builds the relying
 * party from its `providers`, and the presets (`steam()`, `launchpad()`, …) are in the main entry.
 *
 * @see OpenID Authentication 2.0 - Final (https://openid.net/specs/openid-authentication-2_0.html)
 * @packageDocumentation
 */
export { RelyingParty, type VerifiedIdentity } from '../login/openid/relying-party.js';
export type { NonceStore, OpenIdProvider, RelyingPartyOptions } from '../login/openid/options.js';
export type { LoginState } from '../login/openid/login-state.js';
export { OpenIdLoginError, type OpenIdLoginErrorKind } from '../login/openid/errors.js';
export {
  OpenIdStrategy,
  type OpenIdStrategyOptions,
  type OpenIdStrategyUser,
} from '../login/openid/strategy.js';
export { normalizeIdentifier } from '../login/openid/normalize-identifier.js';
export type {
  GenericProviderOptions,
  LaunchpadOptions,
  PresetOptions,
  SteamOptions,
} from '../login/openid/presets.js';
export type {
  AccountOfLogin,
  ProviderPreset,
  SregField,
  VerifiedAssertion,
} from '../login/openid/provider-policy.js';
