import express, { type Request, type Response } from 'express';
import { XRDS_MEDIA_TYPE } from '../../login/openid/constants.js';
import { parseHttpUrl } from '../../login/openid/realm.js';
import { createPrivateAssociation } from './association.js';
import { endpointHandler } from './endpoint.js';
import { identifierPage, xrdsDocument } from './pages.js';
import { shapes, type ProviderShape } from './shapes.js';

/** Options of {@link developmentProvider}. */
export interface DevelopmentProviderOptions {
  /** Absolute URL where the router is mounted, e.g. `http://127.0.0.1:4000` or `.../op`. */
  baseUrl: string;
  /** Names suggested on the login form. Any valid name can be typed. */
  users?: string[];
  /**
   * Which real provider it looks like (its paths, claimed identifiers and sreg answer), to try a
   * preset and your own account mapping locally. Default `'generic'`.
   *
   * @example
   * // providers: [steam({ baseUrl: op.url })], and a user's account key is a 17-digit SteamID64
   * developmentProvider({ baseUrl, shape: 'steam' })
   */
  shape?: ProviderShape;
  /**
   * For `shape: 'launchpad'`: the teams of each user name, answered to Launchpad's OpenID teams
   * extension (`openid.lp.query_membership`) as Launchpad does: the signed `openid.lp.is_member`
   * lists those of the teams asked about the user belongs to (empty for `[]`). A user name not
   * listed gets no teams answer at all, as from a provider without the extension. Default `{}`.
   *
   * @example
   * developmentProvider({ baseUrl, shape: 'launchpad', teams: { alice: ['team-a'] } })
   */
  teams?: Readonly<Record<string, readonly string[]>>;
}

/**
 * A development OpenID 2.0 provider, **for demos and tests only**: anyone can sign in as any user
 * name without a password. It is otherwise a correct stateless OP: it signs positive assertions
 * with a private HMAC-SHA256 association, confirms each one at most once through
 * `check_authentication`, checks that `return_to` falls under the realm, and refuses associations.
 *
 * Routes, relative to `baseUrl` (for `shape: 'generic'`; `steam` and `launchpad` use theirs, see
 * {@link ProviderShape}):
 * - `GET /`: the OP identifier (XRDS for `Accept: application/xrds+xml` or `?format=xrds`,
 *   otherwise HTML with `X-XRDS-Location` and `<link rel="openid2.provider">`);
 * - `GET /user/:name`: the claimed identifier `${baseUrl}/user/:name` of each user;
 * - `GET|POST /endpoint`: the OP endpoint.
 *
 * Wildcard realms (`http://*.example.com/`) are matched; realm verification by RP discovery
 * (section 9.2.1) is not performed.
 *
 * @example
 * app.use('/op', developmentProvider({ baseUrl: 'http://127.0.0.1:3000/op', users: ['alice'] }));
 * @see OpenID Authentication 2.0 sections 7.3, 9, 10 and 11.4.2
 */
export function developmentProvider(options: DevelopmentProviderOptions): express.Router {
  const baseUrl = parseHttpUrl(options.baseUrl);
  if (baseUrl === null || baseUrl.search !== '' || baseUrl.hash !== '') {
    throw new TypeError(
      'developmentProvider: baseUrl must be an absolute http(s) URL without query or fragment',
    );
  }
  const base = baseUrl.href.replace(/\/+$/, '');
  const shape = shapes[options.shape ?? 'generic'];
  if (shape === undefined)
    throw new TypeError("developmentProvider: shape must be 'generic', 'steam' or 'launchpad'");
  const endpoint = `${base}${shape.endpointPath}`;
  const users = (options.users ?? ['alice', 'bob']).filter((u) => /^[A-Za-z0-9._-]{1,64}$/.test(u));
  const handler = endpointHandler({
    base,
    endpoint,
    shape,
    users,
    teams: options.teams ?? {},
    association: createPrivateAssociation(),
    verifiedNonces: new Map(),
  });

  const router = express.Router();
  router.get(route(shape.identifierPath), (req, res) => {
    const xrds = `${base}${shape.identifierPath}?format=xrds`;
    if (wantsXrds(req)) return sendXrds(res, xrdsDocument({ type: 'server', endpoint }));
    res.set({ 'X-XRDS-Location': xrds, Vary: 'Accept' }).type('html');
    res.send(identifierPage({ title: shape.title, endpoint, xrds }));
  });
  router.get(`${route(shape.claimedIdPrefix)}:id`, (req, res) => {
    const id = req.params.id!;
    if (!shape.isClaimedId(id)) return void res.status(404).send('No such user.');
    const claimedId = `${base}${shape.claimedIdPrefix}${id}`;
    const xrds = `${claimedId}?format=xrds`;
    if (wantsXrds(req)) return sendXrds(res, xrdsDocument({ type: 'signon', endpoint, localId: claimedId }));
    res.set({ 'X-XRDS-Location': xrds, Vary: 'Accept' }).type('html');
    res.send(identifierPage({ title: id, endpoint, localId: claimedId, xrds }));
  });
  router
    .route(route(shape.endpointPath))
    .get(handler)
    .post(express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 300 }), handler);
  return router;
}

function wantsXrds(req: Request): boolean {
  return req.query.format === 'xrds' || req.accepts(['text/html', XRDS_MEDIA_TYPE]) === XRDS_MEDIA_TYPE;
}

function sendXrds(res: Response, body: string): void {
  res.set('Vary', 'Accept').type(XRDS_MEDIA_TYPE).send(body);
}

/** A literal path as an Express 5 route: its special characters (Launchpad's `+`) escaped. */
function route(path: string): string {
  return path.replace(/[+*?()[\]{}:!]/g, '\\$&');
}
