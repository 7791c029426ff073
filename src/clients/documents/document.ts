import { CONTROL_OR_INVISIBLE } from '../../rules/names.js';
import { z } from 'zod';
import { MAX_REDIRECT_URI_LENGTH, registeredRedirectUriProblem } from '../../rules/redirect-uri.js';

/**
 * A client metadata document as this server accepts it (draft-ietf-oauth-client-id-metadata-document,
 * the version the MCP authorization specification pins): a public client named by the URL it is
 * served at. What the trust policy (`clientMetadataDocuments.acceptDocument`) is given.
 */
export interface ClientMetadataDocument {
  /** The document's URL, which is the client's `client_id`. */
  clientId: string;
  /** `client_name`, shown on the consent page beside the document's host. */
  clientName: string;
  /** `redirect_uris`, each valid as a public client's redirect URI. */
  redirectUris: string[];
  /** `grant_types` as listed (unknown ones included), or RFC 7591's default `authorization_code`. */
  grantTypes: string[];
  /** `scope`: the scopes the client says it uses, if it says. */
  scope?: string;
  clientUri?: string;
  logoUri?: string;
  contacts?: string[];
  /** The whole document as parsed, unknown fields included, for a policy that reads more. */
  raw: Readonly<Record<string, unknown>>;
}

/** Thrown by {@link parseClientMetadataDocument}; the message is safe to show. */
export class InvalidClientDocumentError extends Error {
  override readonly name = 'InvalidClientDocumentError';
}

const MAX_REDIRECT_URIS = 20;

/** The fields read; every other field is ignored, as RFC 7591 2 says unknown metadata is. */
const documentSchema = z.looseObject({
  client_id: z.string(),
  client_name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .refine((name) => !CONTROL_OR_INVISIBLE.test(name), {
      error: 'must have no control or invisible formatting characters',
    }),
  redirect_uris: z.array(z.string().max(MAX_REDIRECT_URI_LENGTH)).min(1).max(MAX_REDIRECT_URIS),
  grant_types: z.array(z.string()).optional(),
  scope: z.string().max(2000).optional(),
  client_uri: z.string().max(2048).optional(),
  logo_uri: z.string().max(2048).optional(),
  contacts: z
    .array(
      z
        .string()
        .min(1)
        .max(320)
        .refine((contact) => !/\s/.test(contact) && !CONTROL_OR_INVISIBLE.test(contact), {
          error: 'must be an address without spaces or control characters',
        }),
    )
    .max(20)
    .optional(),
  token_endpoint_auth_method: z.string().optional(),
  // OpenID Federation's RP Metadata Choices: the methods the client can use, one to be chosen.
  token_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});

/**
 * Why `clientId` cannot name a metadata document, or `null` if it can: an https URL with a path,
 * in canonical form, without fragment, userinfo or dot segments (the draft's section 3).
 */
export function documentClientIdProblem(clientId: string): string | null {
  if (clientId.length > MAX_REDIRECT_URI_LENGTH) return 'is too long';
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:') return 'must be an https URL';
  // `bad.example.` is `bad.example` to DNS and TLS: one spelling only, so host lists hold.
  if (url.hostname.endsWith('.')) return 'must not end its host name with a dot';
  if (url.pathname === '/') return 'must have a path';
  if (url.username !== '' || url.password !== '') return 'must not contain userinfo';
  if (clientId.includes('#')) return 'must not contain a fragment';
  if (/\/\.\.?(\/|$)|%2e/i.test(clientId)) return 'must not contain dot segments';
  if (url.href !== clientId) return `must be written in canonical form (${url.href})`;
  return null;
}

/**
 * Reads and checks the document served at `url`: its `client_id` must equal the URL exactly, it
 * must name the client and list valid redirect URIs, and it must describe a public client (no
 * `client_secret`; `none` the only token endpoint authentication it may ask for, or among the
 * ones it offers). Unknown fields and grant types are ignored.
 *
 * @throws {InvalidClientDocumentError} with a message that says what is wrong.
 */
export function parseClientMetadataDocument(url: string, body: string): ClientMetadataDocument {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidClientDocumentError('the document is not JSON');
  }
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length === 0 ? 'the document' : issue.path.join('.');
    throw new InvalidClientDocumentError(`${field}: ${issue.message}`);
  }
  const doc = parsed.data;
  if (doc.client_id !== url) {
    throw new InvalidClientDocumentError('its client_id is not the URL it is served at, exactly');
  }
  if ('client_secret' in doc) {
    throw new InvalidClientDocumentError(
      'it has a client_secret: a metadata document describes a public client',
    );
  }
  const method = doc.token_endpoint_auth_method;
  const offered = doc.token_endpoint_auth_methods_supported;
  if ((method !== undefined && method !== 'none') || (offered !== undefined && !offered.includes('none'))) {
    throw new InvalidClientDocumentError(
      'it asks for a token endpoint authentication other than none: a metadata document describes a public client',
    );
  }
  const grantTypes = doc.grant_types ?? ['authorization_code'];
  if (!grantTypes.includes('authorization_code')) {
    throw new InvalidClientDocumentError('its grant_types do not include authorization_code');
  }
  for (const uri of doc.redirect_uris) {
    const problem = registeredRedirectUriProblem(uri, { privateUseScheme: true });
    if (problem !== null) throw new InvalidClientDocumentError(`redirect_uris: ${uri} ${problem}`);
  }
  return {
    clientId: url,
    clientName: doc.client_name,
    redirectUris: doc.redirect_uris,
    grantTypes,
    ...(doc.scope === undefined ? {} : { scope: doc.scope }),
    ...(doc.client_uri === undefined ? {} : { clientUri: doc.client_uri }),
    ...(doc.logo_uri === undefined ? {} : { logoUri: doc.logo_uri }),
    ...(doc.contacts === undefined ? {} : { contacts: doc.contacts }),
    raw: doc,
  };
}

/**
 * How long a document may be used before it is fetched again, in seconds: its `Cache-Control`
 * `max-age` (`no-store`, `no-cache`, and no `max-age` at all, count as 0), held between `floor`
 * and `ceiling`. The floor keeps a client that forbids caching from costing a fetch per request;
 * the ceiling bounds how long a change (a new redirect URI) waits.
 *
 * @example documentLifetime('public, max-age=86400', 60, 3600); // 3600
 */
export function documentLifetime(cacheControl: string | undefined, floor: number, ceiling: number): number {
  let seconds = 0;
  for (const directive of (cacheControl ?? '').toLowerCase().split(',')) {
    const [name, value] = directive.trim().split('=', 2) as [string, string | undefined];
    if (name === 'no-store' || name === 'no-cache') return floor;
    if (name === 'max-age' && value !== undefined && /^\d{1,10}$/.test(value.replace(/"/g, ''))) {
      seconds = Number(value.replace(/"/g, ''));
    }
  }
  return Math.min(Math.max(seconds, floor), ceiling);
}
