/**
 * A strict OpenID 2.0 relying party and its Passport strategy.
 *
 * @see OpenID Authentication 2.0 - Final (https://openid.net/specs/openid-authentication-2_0.html)
 */
export { RelyingParty, type VerifiedIdentity } from './relying-party.js';
export type { OpenIdProvider, RelyingPartyOptions } from './options.js';
export type { LoginState } from './login-state.js';
export { OpenIdLoginError, type OpenIdLoginErrorKind } from './errors.js';
export { OpenIdStrategy, type OpenIdStrategyOptions, type OpenIdStrategyUser } from './strategy.js';
export { OPENID2_NS, IDENTIFIER_SELECT } from './constants.js';
export { normalizeIdentifier } from './normalize-identifier.js';
export {
  steam,
  launchpad,
  ubuntuOne,
  openid,
  type PresetOptions,
  type GenericProviderOptions,
} from './presets.js';
export type { ProviderPreset, VerifiedAssertion, AccountOfLogin, SregField } from './provider-policy.js';
