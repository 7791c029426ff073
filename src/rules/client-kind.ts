import { hashSecret, safeEqual } from '../crypto/secrets.js';
import type { ClientRecord } from '../storage/types.js';
import { listedRedirectUriMatches, redirectUriMatches } from './redirect-uri.js';

/**
 * What a client's metadata document says beyond its stored row, for the request that loaded it:
 * read from the document (cached by its lifetime), never from the storage.
 */
export interface ClientDocumentFacts {
  /** The document's `redirect_uris`, matched by {@link listedRedirectUriMatches}. */
  redirectUris: readonly string[];
  /** The document's `grant_types`, unknown ones included. */
  grantTypes: readonly string[];
}

/**
 * A client as a request loaded it: the stored row, and for a client named by the URL of its
 * metadata document (`clientMetadataDocuments`), what the document says. Operator-registered
 * clients have no `document`.
 */
export type LoadedClient = ClientRecord & { readonly document?: ClientDocumentFacts };

/**
 * Whether a client may be used now: not disabled (or suspended) by the operator, and not waiting
 * for the operator's approval (a member's client with `developerApps.requireApproval`). A client
 * out of service neither authorizes nor authenticates, and its tokens do not work meanwhile.
 */
export function inService(client: Pick<ClientRecord, 'disabled' | 'awaitingApproval'>): boolean {
  return !client.disabled && client.awaitingApproval !== true;
}

/**
 * Whether `secret` is the client's: its secret, or its previous one while a rotation's overlap
 * lasts (`previousSecret`, until `expiresAt`). Both hashes are compared whatever the first gives,
 * so the time taken does not say which matched.
 */
export function secretIsClients(
  secret: string,
  client: Pick<ClientRecord, 'secretHash' | 'previousSecret'>,
  now: number,
): boolean {
  const presented = hashSecret(secret);
  const current = client.secretHash !== null && safeEqual(presented, client.secretHash);
  const previous = client.previousSecret;
  const old = previous != null && now < previous.expiresAt && safeEqual(presented, previous.hash);
  return current || old;
}

/**
 * Whether a client has no secret (RFC 6749 2.1): a native app, a command-line tool, a device, a
 * browser app. It names itself with `client_id` alone; what protects its grants is PKCE (code
 * clients), the person's approval on another screen (device clients) and refresh token rotation.
 */
export function isPublicClient(client: Pick<ClientRecord, 'secretHash'>): boolean {
  return client.secretHash === null;
}

/**
 * Whether the client's authorization requests must carry a PKCE challenge: registered so, or a
 * public code client, whose code nothing else protects (RFC 8252 8.1, RFC 9700 2.1.1); with the
 * `oauth2.1` profile, every code client (OAuth 2.1).
 */
export function pkceRequired(
  client: Pick<ClientRecord, 'grantType' | 'secretHash' | 'requirePkce'>,
  profile: 'oauth2' | 'oauth2.1' = 'oauth2',
): boolean {
  if (client.requirePkce === true) return true;
  return client.grantType === 'authorization_code' && (profile === 'oauth2.1' || isPublicClient(client));
}

/**
 * Whether `requested` is a redirect URI of the client ({@link redirectUriMatches}). A public code
 * client registered with a loopback IP literal (`http://127.0.0.1/cb`, `http://[::1]/cb`) may name
 * any port (RFC 8252 7.3: a native app listens on whatever port it is given); `localhost` and every
 * confidential client keep the exact rule. A client without a redirect URI (the device flow) has none.
 * A client loaded with its metadata document is matched against the document's list instead
 * ({@link listedRedirectUriMatches}). With the `oauth2.1` profile the requested URI must be the
 * registered one exactly (OAuth 2.1), the loopback port aside.
 */
export function clientRedirectUriMatches(
  client: Pick<LoadedClient, 'redirectUri' | 'grantType' | 'secretHash' | 'document'>,
  requested: string,
  profile: 'oauth2' | 'oauth2.1' = 'oauth2',
): boolean {
  if (client.document !== undefined) return listedRedirectUriMatches(client.document.redirectUris, requested);
  if (client.redirectUri === '') return false;
  const anyPort = client.grantType === 'authorization_code' && isPublicClient(client);
  return redirectUriMatches(client.redirectUri, requested, {
    anyLoopbackPort: anyPort,
    exact: profile === 'oauth2.1',
  });
}

/**
 * Whether every authorization of this request asks the person, even for an application trusted
 * before: a public code client redirecting to a loopback address or a private-use scheme (any
 * program on the machine, or any app claiming the scheme, can use its public `client_id` there,
 * and PKCE cannot tell them apart: RFC 8252 8.6). A claimed https redirect identifies the app.
 */
export function asksEachTime(
  client: Pick<ClientRecord, 'grantType' | 'secretHash'>,
  redirectUri: string,
): boolean {
  return (
    client.grantType === 'authorization_code' && isPublicClient(client) && !redirectUri.startsWith('https://')
  );
}

/** The grant a client must be registered for to send an authorization request of `responseType`. */
export function grantOfResponseType(responseType: 'code' | 'token'): 'authorization_code' | 'implicit' {
  return responseType === 'code' ? 'authorization_code' : 'implicit';
}
