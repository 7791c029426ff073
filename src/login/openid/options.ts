import { MAX_PROVIDER_NAME_LENGTH } from '../../rules/names.js';
import { z } from 'zod';

/**
 * Where response nonces are remembered (OpenID 2.0 11.3): shared by every instance, so that a
 * response is accepted once across the deployment. The server backs it with the storage's
 * ephemeral store.
 */
export interface NonceStore {
  /**
   * Records `nonce` under `scope` until `expiresAt`. Resolves `true` for the first caller and
   * `false` for every later one, however many race, while it is kept. `scope` is an OP endpoint
   * (response nonces) or {@link LOGIN_STATE_SCOPE} (login-state ids, claimed once per login).
   */
  use(scope: string, nonce: string, expiresAt: number): Promise<boolean>;
}
import { parseHttpUrl, returnToMatchesRealm } from './realm.js';
import { TEAM_NAME } from '../../rules/names.js';
import {
  SREG_FIELDS,
  type ConfiguredProvider,
  type OpenIdProvider,
  type ProfileSource,
  type ProviderPreset,
  type SregField,
} from './provider-policy.js';

/**
 * The {@link NonceStore} scope under which each login's {@link LoginState.id} is claimed. Not an
 * http(s) URL, so no OP endpoint's nonces can collide with it.
 */
export const LOGIN_STATE_SCOPE = 'urn:openid-oauth-bridge:login-state';

export type { OpenIdProvider } from './provider-policy.js';

/**
 * Options of {@link RelyingParty}, validated once by the constructor.
 *
 * @example
 * { providers: [{ name: 'Dev', identifier: 'http://127.0.0.1:4000/' }],
 *   returnTo: 'http://127.0.0.1:3000/oauth/login/callback', realm: 'http://127.0.0.1:3000/',
 *   nonces: storage.nonces, clock: Date.now }
 */
export interface RelyingPartyOptions {
  /**
   * The allow-list. Users can only log in at these providers. A {@link ProviderPreset} (`steam()`,
   * `launchpad()`, ...) adds its endpoint and claimed-id checks, sreg request and account key.
   */
  providers: readonly (OpenIdProvider | ProviderPreset)[];
  /** Absolute callback URL, e.g. `http://127.0.0.1:3000/oauth/login/callback`. */
  returnTo: string;
  /** The realm shown by the OP, e.g. `http://127.0.0.1:3000/`; `returnTo` must fall under it. */
  realm: string;
  /** Shared by all instances: makes response nonces single-use across the deployment. */
  nonces: NonceStore;
  /** Epoch ms; the relying party's only time source. */
  clock: () => number;
  /** Deadline of each outbound request. Default 5000. */
  timeoutMs?: number;
  /** Largest response body read from a provider. Default 256 KiB. */
  maxResponseBytes?: number;
  /** Accepted age (and clock skew) of `openid.response_nonce`. Default 5 minutes. */
  nonceMaxAgeMs?: number;
  /** How long a begun login may take before its callback is refused. Default 15 minutes. */
  loginMaxAgeMs?: number;
}

/** Options after validation and defaults. */
export interface RelyingPartyConfig {
  providers: readonly ConfiguredProvider[];
  returnTo: string;
  realm: string;
  nonces: NonceStore;
  clock: () => number;
  timeoutMs: number;
  maxResponseBytes: number;
  nonceMaxAgeMs: number;
  loginMaxAgeMs: number;
}

const httpUrl = (what: string) =>
  z.string().refine((v) => {
    const url = parseHttpUrl(v);
    return url !== null && !v.includes('#');
  }, `${what} must be an absolute http(s) URL without credentials or fragment`);

const pattern = (what: string) =>
  z.instanceof(RegExp).refine((re) => !re.global && !re.sticky, `${what} must not have the g or y flag`);

const icon = z
  .string()
  .max(16 * 1024)
  .refine(
    (v) =>
      /^data:image\/(png|gif|jpeg|webp|svg\+xml)[;,]/.test(v) ||
      (parseHttpUrl(v)?.protocol === 'https:' && !v.includes('#')),
    'icon must be an https URL or a data:image/ URL',
  );

/**
 * One allowed provider: `name` and `identifier`, and the optional fields of a
 * {@link ProviderPreset}, kept as given. Exported for the server's options, which accept the same.
 */
export const openIdProviderSchema = z.object({
  name: z.string().min(1).max(MAX_PROVIDER_NAME_LENGTH),
  identifier: httpUrl('identifier'),
  endpoints: z
    .array(z.union([httpUrl('endpoint'), pattern('an endpoint pattern')]))
    .min(1)
    .readonly()
    .optional(),
  claimedId: pattern('claimedId').optional(),
  icon: icon.optional(),
  sreg: z
    .array(z.enum(SREG_FIELDS as [SregField, ...SregField[]]))
    .refine((list) => new Set(list).size === list.length, 'sreg fields must be unique')
    .readonly()
    .optional(),
  teams: z
    .array(z.string().regex(TEAM_NAME, 'teams must be Launchpad team names (lowercase, without ~)'))
    .min(1)
    .max(50)
    .refine((list) => new Set(list).size === list.length, 'teams must be unique')
    .readonly()
    .optional(),
  account: z
    .custom<ProviderPreset['account']>((v) => typeof v === 'function', 'account must be a function')
    .optional(),
  profile: z
    .custom<ProfileSource>(
      (v) =>
        typeof (v as ProfileSource | null)?.url === 'function' &&
        typeof (v as ProfileSource).parse === 'function',
      "profile must be a profile source (a preset's)",
    )
    .optional(),
});

const schema = z
  .object({
    providers: z
      .array(openIdProviderSchema)
      .min(1)
      .refine(
        (list) => new Set(list.map((p) => p.name)).size === list.length,
        'provider names must be unique',
      )
      .refine(
        (list) => new Set(list.map((p) => p.identifier)).size === list.length,
        'provider identifiers must be unique',
      ),
    returnTo: httpUrl('returnTo').refine(
      (v) => !new URL(v).searchParams.has('rp_nonce'),
      'rp_nonce is reserved',
    ),
    realm: z.string(),
    nonces: z.custom<NonceStore>(
      (v) => typeof (v as { use?: unknown } | null)?.use === 'function',
      'nonces must implement NonceStore',
    ),
    clock: z.custom<() => number>((v) => typeof v === 'function', 'clock must be a function'),
    timeoutMs: z.number().int().positive().default(5000),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024),
    nonceMaxAgeMs: z
      .number()
      .int()
      .positive()
      .default(5 * 60 * 1000),
    loginMaxAgeMs: z
      .number()
      .int()
      .positive()
      .default(15 * 60 * 1000),
  })
  .refine((o) => returnToMatchesRealm(o.returnTo, o.realm), {
    path: ['realm'],
    message: 'returnTo must fall under realm (OpenID 2.0 section 9.2)',
  });

/**
 * Validates relying-party options once, at construction.
 *
 * @throws {TypeError} naming the offending option's path.
 */
export function parseRelyingPartyOptions(options: RelyingPartyOptions): RelyingPartyConfig {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TypeError(
      `Invalid OpenID relying party option ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return {
    ...parsed.data,
    providers: parsed.data.providers.map((p) => ({
      ...p,
      // Compared with discovered endpoints, which the URL parser normalised.
      ...(p.endpoints && {
        endpoints: p.endpoints.map((e) => (typeof e === 'string' ? parseHttpUrl(e)!.href : e)),
      }),
    })),
  };
}
