import type { Request } from 'express';
import { Strategy } from 'passport-strategy';
import { OpenIdLoginError } from './errors.js';
import type { RelyingParty, VerifiedIdentity } from './relying-party.js';

/** Options of {@link OpenIdStrategy}. */
export interface OpenIdStrategyOptions {
  /** Origin of the configured base URL, e.g. `http://127.0.0.1:3000`; never the Host header. */
  origin: string;
  /** Session property holding the login state between begin and callback. Default `openidLogin`. */
  sessionKey?: string;
}

/**
 * What the strategy passes to `success`: the {@link VerifiedIdentity} without `opEndpoint`.
 * `displayName` and `attributes` are present only when known.
 */
export interface OpenIdStrategyUser {
  /** The normalised claimed identifier. */
  identifier: string;
  provider: string;
  /** The preset's account key (a SteamID64, a Launchpad id); `identifier` for a plain provider. */
  accountKey: string;
  displayName?: string;
  /** Signed sreg values, e.g. `{ nickname: 'alice', fullname: 'Alice Liddell' }`. */
  attributes?: VerifiedIdentity['attributes'];
  /** OpenID Connect claims of the account, e.g. `{ steam_id: '76561197960287930' }`. */
  claims?: VerifiedIdentity['claims'];
  /** The teams the provider signed the user a member of, when the preset asks about teams. */
  teams?: VerifiedIdentity['teams'];
}

type Outcome =
  | { type: 'redirect'; url: string }
  | { type: 'success'; user: OpenIdStrategyUser }
  | { type: 'fail'; error: OpenIdLoginError };

/**
 * Passport strategy over a {@link RelyingParty}. A GET with `openid_identifier` (a configured
 * provider's identifier or name) begins a login; a GET with `openid.mode` is the callback. The
 * login state lives in `req.session[sessionKey]` and is deleted when the callback arrives. That
 * alone does not make it single-use (parallel callbacks each load their own copy of the session):
 * the relying party claims it in the shared nonce store, so one callback per login gets past the
 * local checks. Refusals go to `fail({ message, kind }, 400)`; anything else to `error`.
 *
 * Only GET is accepted: a POST callback would bypass the `return_to` comparison with the URL
 * actually received (section 11.1), the hole the `openid` npm package has.
 *
 * @example
 * passport.use(new OpenIdStrategy(rp, { origin: 'http://127.0.0.1:3000' }));
 * router.get('/login', passport.authenticate('openid-oauth-bridge', { session: false }, done));
 */
export class OpenIdStrategy extends Strategy {
  readonly name = 'openid-oauth-bridge';
  // Plain private properties, not #fields: passport (and a runner like it) calls `authenticate`
  // on an object created with Object.create(strategy), which #fields would not reach.
  private readonly rp: RelyingParty;
  private readonly origin: string;
  private readonly sessionKey: string;

  constructor(rp: RelyingParty, options: OpenIdStrategyOptions) {
    super();
    this.rp = rp;
    this.origin = new URL(options.origin).origin;
    this.sessionKey = options.sessionKey ?? 'openidLogin';
  }

  override authenticate(req: Request): void {
    const session = (req as { session?: unknown }).session;
    if (typeof session !== 'object' || session === null) {
      this.error(new Error('OpenIdStrategy needs a session middleware (req.session is missing).'));
      return;
    }
    this.run(req, session as Record<string, unknown>)
      .then(
        (outcome) => this.apply(outcome),
        (err: unknown) => {
          if (err instanceof OpenIdLoginError) this.apply({ type: 'fail', error: err });
          else this.error(err instanceof Error ? err : new Error('OpenID login failed unexpectedly.'));
        },
      )
      .catch((err: unknown) => this.error(err instanceof Error ? err : new Error(String(err))));
  }

  private async run(req: Request, session: Record<string, unknown>): Promise<Outcome> {
    if (req.method !== 'GET') {
      throw new OpenIdLoginError('invalid_response', 'OpenID login accepts only GET requests.');
    }
    const query = req.query as Record<string, unknown>;
    if (query['openid.mode'] !== undefined) {
      const state = session[this.sessionKey];
      delete session[this.sessionKey];
      if (state === undefined) {
        throw new OpenIdLoginError(
          'expired',
          'No login is in progress in this session. Please sign in again.',
        );
      }
      // Prefixing the configured origin keeps "//host/path" or an absolute-form target from
      // pointing the URL at another host.
      if (!req.originalUrl.startsWith('/')) {
        throw new OpenIdLoginError('invalid_response', 'The login response URL is malformed.');
      }
      const identity = await this.rp.verify(new URL(this.origin + req.originalUrl), state as never);
      return { type: 'success', user: strategyUser(identity) };
    }
    const requested = query.openid_identifier;
    const provider = typeof requested === 'string' ? this.rp.findProvider(requested) : undefined;
    if (provider === undefined) {
      throw new OpenIdLoginError('unknown_provider', 'Choose one of the accepted OpenID providers.');
    }
    const { redirectUrl, state } = await this.rp.begin(provider);
    session[this.sessionKey] = state;
    return { type: 'redirect', url: redirectUrl };
  }

  private apply(outcome: Outcome): void {
    if (outcome.type === 'redirect') this.redirect(outcome.url);
    else if (outcome.type === 'success') this.success(outcome.user);
    // The error itself rides along, for the operator's log (never shown).
    else this.fail({ message: outcome.error.message, kind: outcome.error.kind, error: outcome.error }, 400);
  }
}

function strategyUser(identity: VerifiedIdentity): OpenIdStrategyUser {
  const { identifier, provider, accountKey, displayName, attributes, claims, teams } = identity;
  return {
    identifier,
    provider,
    accountKey,
    ...(teams !== undefined && { teams }),
    ...(displayName !== undefined && { displayName }),
    ...(claims !== undefined && { claims }),
    ...(attributes !== undefined && { attributes }),
  };
}
