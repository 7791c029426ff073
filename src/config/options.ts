import type { RequestHandler } from 'express';
import type { Store as ExpressSessionStore } from 'express-session';
import type { Strategy } from 'passport-strategy';
import { isPrivateSigningJwk, type Jwk } from '../oidc/keys.js';
import { z } from 'zod';
import type { PageRenderers } from '../pages/types.js';
import { SCOPE_TOKEN } from '../rules/scopes.js';
import { resourceKey } from '../rules/resources.js';
import type { AccountsHook, AuthenticatedAccountHook } from '../login/accounts.js';
import { openIdProviderSchema } from '../login/openid/options.js';
import { MAX_PROVIDER_NAME_LENGTH } from '../rules/names.js';
import { missingStorageMethods } from '../storage/required.js';
import type { Storage } from '../storage/types.js';
import type { ClientMetadataDocument } from '../clients/documents/document.js';
import type { ErrorHook, InitialAccessTokenCheck, Logger, OidcClaimsHook, ResolvedOptions } from './types.js';

export type {
  AuthorizationServerOptions,
  DynamicRegistrationOptions,
  ErrorContext,
  ErrorHook,
  LoginOptions,
  Logger,
  ProviderOptions,
  RateLimitOptions,
  ResolvedOptions,
  SessionOptions,
  TokenOptions,
} from './types.js';

/** What `dynamicRegistration: true` stands for. */
const DYNAMIC_REGISTRATION_DEFAULTS = {
  unusedTtl: 86_400,
  rateLimit: { maxPerMinute: 20, maxPerHour: 200 },
};

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

const baseUrl = httpUrl.refine((value) => {
  // zod runs this even when the url check failed: an unparseable URL is that check's to report.
  const url = URL.parse(value);
  return url === null || (!url.search && !url.hash && !url.username && !url.password);
}, 'must not contain a query, fragment or userinfo');

/** A host name, or `*.` and a host name for its subdomains. */
const hostPattern = z
  .string()
  .regex(
    /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/,
    'must be a lower-case host name such as app.example, or *.app.example',
  );

/** An https origin as `URL#origin` writes it: `https://localhost:8443`, no path. */
const httpsOrigin = z
  .string()
  .refine((value) => URL.parse(value)?.origin === value && value.startsWith('https://'), {
    error: 'must be an https origin such as https://localhost:8443 (no path, no trailing slash)',
  });

const scopeToken = z.string().regex(SCOPE_TOKEN, 'must be an RFC 6749 scope-token');

const fn = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', { error: `must be a function (${what})` });

/** A provider: a preset (`steam()`, …) or a plain `{ name, identifier }`, checked as the relying party checks it. */
const providerSchema = openIdProviderSchema.strict().extend({
  /** Shown on the selection page; also accepted as `opIdentifier` shorthand. */
  name: z.string().min(1).max(MAX_PROVIDER_NAME_LENGTH),
  /** The provider's OpenID 2.0 discovery URL (OP identifier or claimed-identifier URL). */
  identifier: httpUrl,
});

/**
 * The options' validation. Objects are strict: an unknown or misspelled option is an error (with a
 * "did you mean"), never silently ignored.
 *
 * @internal
 */
export const optionsSchema = z.strictObject({
  /** Absolute URL where the routers are mounted, e.g. `https://auth.example.com`. */
  baseUrl,
  storage: z.custom<Storage>((value) => missingStorageMethods(value).length === 0, {
    error: (issue) =>
      `must implement the storage contract; missing: ${missingStorageMethods(issue.input).join(', ')}`,
  }),
  /** The OpenID 2.0 providers users may log in at: the only ones ever contacted. */
  providers: z.array(providerSchema).min(1, 'configure at least one OpenID provider'),
  login: z
    .strictObject({
      /** A passport strategy to log users in instead of the built-in OpenID 2.0 relying party. */
      strategy: z
        .custom<Strategy>((value) => typeof (value as Strategy | undefined)?.authenticate === 'function', {
          error: 'must be a passport strategy (an object with authenticate())',
        })
        .optional(),
      /** Per outbound request to a provider (discovery, verification). */
      timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
      maxResponseBytes: z
        .number()
        .int()
        .min(1024)
        .max(10 * 1024 * 1024)
        .default(256 * 1024),
    })
    .prefault({}),
  tokens: z
    .strictObject({
      /** Access token lifetime in seconds (the spec's `expires_in`). */
      accessTokenTtl: z.number().int().min(1).max(86_400).default(3600),
      /** Authorization code lifetime in seconds (RFC 6749 4.1.2 recommends at most 10 minutes). */
      codeTtl: z.number().int().min(1).max(600).default(60),
      /** Issue a new refresh token at each refresh and revoke the grant if an old one is reused. */
      rotateRefreshTokens: z.union([z.boolean(), z.literal('public-clients')]).default('public-clients'),
      /** Refuse a refresh without `redirect_uri` (the spec's strict reading of RFC 6749 6). */
      requireRedirectUriOnRefresh: z.boolean().default(false),
    })
    .prefault({}),
  device: z
    .strictObject({
      /** Lifetime of a device code and its user code, in seconds. */
      codeTtl: z.number().int().min(60).max(1800).default(600),
      /** The polling interval given to devices, in seconds. */
      interval: z.number().int().min(1).max(60).default(5),
      /** Device authorization requests of one client per minute. */
      maxRequestsPerClient: z.union([z.number().int().min(1), z.literal(false)]).default(300),
      /** User codes typed per minute from one address, or by one signed-in account. */
      maxUserCodeAttempts: z.number().int().min(1).max(1000).default(10),
      /** User codes typed per minute by everyone not signed in, together. */
      maxAnonymousUserCodeAttempts: z.number().int().min(1).default(1000),
    })
    .prefault({}),
  oidc: z
    .strictObject({
      /** Seals the private signing keys the library keeps in the storage. */
      keySecret: z.string().min(32, 'must be at least 32 characters').optional(),
      /** Your own private JWKs, with kid and alg; the first signs. */
      keys: z
        .array(
          z.custom<Jwk>(isPrivateSigningJwk, {
            error:
              'must be a private RSA (2048 bits or more) or P-256 JWK with a kid and alg RS256 or ES256 (asymmetric keys only)',
          }),
        )
        .min(1)
        .refine(
          (keys) => new Set(keys.map((key) => key.kid)).size === keys.length,
          'each key needs its own kid',
        )
        // Discovery 1.0 section 3: RS256 must be among id_token_signing_alg_values_supported, the
        // one algorithm every relying party can verify; ES256 keys alone would shut out those that
        // accept only RS256 (Core's default for a client that registers no algorithm).
        .refine(
          (keys) => keys.some((key) => key.alg === 'RS256'),
          'needs an RS256 key (a private RSA JWK of 2048 bits or more, with a kid and alg RS256): OpenID Connect Discovery 1.0 section 3 requires RS256, and relying parties that accept only RS256 could not verify ES256 ID tokens; add one, first in the list to sign with it, or use keySecret',
        )
        .optional(),
      signingAlgorithm: z.enum(['RS256', 'ES256']).default('RS256'),
      idTokenTtl: z.number().int().min(60).max(86_400).default(3600),
      /** Your own claims per subject and scopes, for ID tokens and UserInfo. */
      claims: fn<OidcClaimsHook>('(subject, scopes) => ({ claim: value })').optional(),
    })
    .refine((oidc) => (oidc.keySecret === undefined) !== (oidc.keys === undefined), {
      path: ['keySecret'],
      error: 'give keySecret (keys kept in the storage) or keys (your own), one of them',
    })
    .optional(),
  clientMetadataDocuments: z
    .strictObject({
      maxBytes: z
        .number()
        .int()
        .min(16 * 1024)
        .max(1024 * 1024)
        .default(64 * 1024),
      timeoutMs: z.number().int().min(500).max(10_000).default(4_000),
      minCacheSeconds: z.number().int().min(0).max(3600).default(60),
      maxCacheSeconds: z
        .number()
        .int()
        .min(0)
        .max(7 * 86_400)
        .default(3600),
      allowHosts: z.array(hostPattern).optional(),
      refuseHosts: z.array(hostPattern).default([]),
      acceptDocument: fn<(document: ClientMetadataDocument) => boolean | Promise<boolean>>(
        '(document) => boolean | Promise<boolean>',
      ).optional(),
      allowLoopbackOrigins: z.array(httpsOrigin).default([]),
      maxFetchesPerMinute: z.union([z.number().int().min(1).max(10_000), z.literal(false)]).default(30),
      ca: z
        .array(z.string().includes('-----BEGIN CERTIFICATE-----', { error: 'must be a PEM certificate' }))
        .default([]),
    })
    .refine((documents) => documents.maxCacheSeconds >= documents.minCacheSeconds, {
      path: ['maxCacheSeconds'],
      error: 'must be at least clientMetadataDocuments.minCacheSeconds',
    })
    .optional(),
  session: z
    .strictObject({
      /**
       * Signs the session cookie; an array allows rotation (the first signs). Required unless
       * `middleware` is given.
       */
      secret: z
        .union([
          z.string().min(32, 'must be at least 32 characters'),
          z.array(z.string().min(32, 'must be at least 32 characters')).min(1),
        ])
        .optional(),
      /**
       * Your app's own express-session middleware, to keep the library's login state in your
       * session (under its own key) instead of a cookie of its own. `secret`, `cookieName`,
       * `store` and `secureCookie` then do not apply: your session's settings do.
       */
      middleware: z
        .custom<RequestHandler>((value) => typeof value === 'function', {
          error: "must be your app's express-session middleware",
        })
        .optional(),
      /** The library's own cookie, so a host's session is left alone. */
      cookieName: z.string().min(1).default('openid_oauth_bridge.sid'),
      /** Idle timeout in seconds: a login session ends this long after its last request. */
      maxAge: z.number().int().min(60).default(1800),
      /** Absolute lifetime in seconds: a login session ends this long after it started, however active. */
      absoluteMaxAge: z
        .number()
        .int()
        .min(60)
        .default(10 * 3600),
      /** An express-session store; by default one over the storage's ephemeral store. */
      store: z
        .custom<ExpressSessionStore>(
          (value) => typeof (value as { get?: unknown } | undefined)?.get === 'function',
          {
            error: 'must be an express-session store',
          },
        )
        .optional(),
      /** Defaults to true when `baseUrl` is https. */
      secureCookie: z.boolean().optional(),
    })
    .refine((session) => session.absoluteMaxAge >= session.maxAge, {
      path: ['absoluteMaxAge'],
      error: 'must be at least session.maxAge (the idle timeout)',
    })
    .refine((session) => session.secret !== undefined || session.middleware !== undefined, {
      path: ['secret'],
      error: 'is required',
    }),
  /** Operator-defined scopes and their descriptions, shown on the consent page. */
  scopes: z.record(scopeToken, z.string()).default({}),
  /** The resources tokens are issued for (RFC 8707), each with its metadata (RFC 9728). */
  resources: z
    .array(
      z.strictObject({
        resource: z.string().refine((uri) => resourceKey(uri) !== undefined && /^https?:/i.test(uri), {
          error: 'must be an absolute http(s) URL without a fragment',
        }),
        name: z.string().min(1).max(200).optional(),
        scopes: z.array(scopeToken).optional(),
        default: z.boolean().optional(),
        accessTokenFormat: z.enum(['opaque', 'jwt']).optional(),
        accessTokenTtl: z.number().int().min(1).max(86_400).optional(),
      }),
    )
    .default([]),
  /**
   * Limits on failed client authentications (RFC 6819 5.1.4.2.3), per `client_id` and per
   * address (`req.ip`, so the host's `trust proxy` setting applies), in fixed windows. Successes
   * are never counted. `false` turns the limit off; `false` for one count turns that count off.
   */
  rateLimit: z
    .union([
      z.literal(false),
      z.strictObject({
        windowMs: z
          .number()
          .int()
          .min(1000)
          .max(24 * 3600 * 1000)
          .default(15 * 60 * 1000),
        maxFailuresPerClient: z.union([z.number().int().min(1), z.literal(false)]).default(10),
        maxFailuresPerAddress: z.union([z.number().int().min(1), z.literal(false)]).default(50),
      }),
    ])
    .prefault({}),
  /**
   * Dynamic client registration (RFC 7591) at `POST /oauth/register`: off by default. `true` turns
   * it on with every default; an object sets them.
   */
  dynamicRegistration: z
    .union([
      z.boolean(),
      z.strictObject({
        /**
         * Initial access tokens (RFC 7591 3): a list of tokens, or a check of the one presented.
         * Without one only public clients register; with one, confidential clients too.
         */
        initialAccessTokens: z
          .union([
            z.array(z.string().min(16, 'must be at least 16 characters')).min(1),
            fn<InitialAccessTokenCheck>('(token, req) => boolean | Promise<boolean>'),
          ])
          .optional(),
        /** The scopes a self-registered client may have: default all the server offers. */
        scopes: z.array(scopeToken).min(1).optional(),
        /** Seconds a registration may stay unused (no token issued) before prune removes it. */
        unusedTtl: z
          .number()
          .int()
          .min(60)
          .max(30 * 86_400)
          .default(86_400),
        /** Registrations per address (`req.ip`), a burst per minute and a sustained rate per hour. */
        rateLimit: z
          .union([
            z.literal(false),
            z.strictObject({
              maxPerMinute: z.number().int().min(1).default(20),
              maxPerHour: z.number().int().min(1).default(200),
            }),
          ])
          .prefault({}),
      }),
    ])
    .default(false)
    .transform((value): ResolvedOptions['dynamicRegistration'] =>
      value === true
        ? { ...DYNAMIC_REGISTRATION_DEFAULTS, rateLimit: { ...DYNAMIC_REGISTRATION_DEFAULTS.rateLimit } }
        : value,
    ),
  /** The developer page's limits (`developerRouter`): every field has a default. */
  developerApps: z
    .strictObject({
      maxAppsPerMember: z.number().int().min(1).max(1000).default(10),
      requireApproval: z.boolean().default(false),
      unverifiedReach: z.union([z.number().int().min(1), z.literal(false)]).default(100),
      scopes: z.array(scopeToken).min(1).optional(),
      recentLoginMinutes: z.number().int().min(1).max(60).default(5),
      maxSecretOverlapMinutes: z
        .number()
        .int()
        .min(0)
        .max(7 * 1440)
        .default(1440),
      maxCreatedPerHour: z.number().int().min(1).max(1000).default(5),
    })
    .prefault({}),
  /** Per-app usage: counted in memory, written every `flushSeconds` (see UsageOptions). */
  usage: z
    .union([
      z.literal(false),
      z.strictObject({
        flushSeconds: z.number().int().min(1).max(3600).default(60),
        maxPending: z.number().int().min(10).max(1_000_000).default(10_000),
      }),
    ])
    .prefault({}),
  /**
   * Maps every verified login to your own account (or refuses it): tokens, consents, events and
   * `requireBearer` then carry your account id. Default: one library user per claimed identifier.
   */
  accounts: fn<AccountsHook>('(login, req) => ({ accountId, displayName } | { refuse })').optional(),
  /**
   * Accepts an end user your app has already signed in (its own passport login, say): the
   * authorization endpoint then asks for consent without a second login.
   */
  authenticatedAccount: fn<AuthenticatedAccountHook>(
    '(req) => ({ accountId, displayName } | undefined)',
  ).optional(),
  /** Require `state` on implicit requests (RFC 9700 2.1): on by default. */
  requireStateForImplicit: z.boolean().default(true),
  /** The rules kept: OAuth 2.0 as the service specification says (the default), or OAuth 2.1's. */
  profile: z.enum(['oauth2', 'oauth2.1']).default('oauth2'),
  pages: z.custom<Partial<PageRenderers>>((value) => typeof value === 'object' && value !== null).default({}),
  /** The single time source, epoch milliseconds. */
  clock: fn<() => number>('returning epoch milliseconds').default(() => () => Date.now()),
  logger: z
    .custom<Logger>(
      (value) =>
        typeof (value as Logger | undefined)?.error === 'function' &&
        typeof (value as Logger).warn === 'function',
      { error: 'must have error() and warn()' },
    )
    .optional(),
  /**
   * Called once for every request the library answers with a 5xx (an unknown error, a storage
   * outage, a provider that does not answer), after it was logged; the client sees no internals.
   */
  onError: fn<ErrorHook>('(error, { requestId, route, status }) => void').optional(),
});
