/**
 * What users of openid-oauth-bridge need in their own tests: a development OpenID 2.0 provider
 * to log in at.
 *
 * @packageDocumentation
 */
export * from './provider/index.js';
