/**
 * What users of openid-oauth-bridge need in their own tests: a development OpenID 2.0 provider
 * to log in at (plain, Steam-like, or Launchpad-like with teams), a Steam-Web-API-like server for
 * persona names and avatars, and the conformance suite their storage adapter must pass.
 *
 * @packageDocumentation
 */
export * from './provider/index.js';
export * from './conformance/index.js';
export {
  describeEphemeralStoreConformance,
  type EphemeralStoreConformanceOptions,
} from './conformance/ephemeral-describe.js';
export {
  startSteamWebApi,
  type RunningSteamWebApi,
  type SteamWebApiOptions,
  type SteamWebApiPlayer,
} from './steam-web-api.js';
