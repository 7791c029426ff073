export type { GrantDeps } from './deps.js';
export { recordConsent, revokeApplication, revokeGrant, standingGrant } from './grant.js';
export { exchangeCode, issueCode, type CodeExchange } from './codes.js';
export { refreshAccessToken } from './refresh.js';
export {
  currentScopes,
  saveAccessToken,
  tokenResponse,
  usable,
  type IssuedToken,
  type Subject,
  type TokenResponse,
} from './tokens.js';
