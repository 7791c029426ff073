import express, { type Request, type Response } from 'express';
import { XRDS_MEDIA_TYPE } from '../../login/openid/constants.js';
import { parseHttpUrl } from '../../login/openid/realm.js';
import { createPrivateAssociation } from './association.js';
import { endpointHandler } from './endpoint.js';
import { identifierPage, xrdsDocument } from './pages.js';

/** Options of {@link developmentProvider}. */
export interface DevelopmentProviderOptions {
  /** Absolute URL where the router is mounted, e.g. `http://127.0.0.1:4000` or `.../op`. */
  baseUrl: string;
  /** Names suggested on the login form. Any valid name can be typed. */
  users?: string[];
}

/**
 * A development OpenID 2.0 provider, **for demos and tests only**: anyone can sign in as any user
 * name without a password. It is otherwise a correct stateless OP: it signs positive assertions
 * with a private HMAC-SHA256 association, confirms each one at most once through
 * `check_authentication`, checks that `return_to` falls under the realm, and refuses associations.
 *
 * Routes, relative to `baseUrl`:
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
  const endpoint = `${base}/endpoint`;
  const users = (options.users ?? ['alice', 'bob']).filter((u) => /^[A-Za-z0-9._-]{1,64}$/.test(u));
  const handler = endpointHandler({
    base,
    endpoint,
    users,
    association: createPrivateAssociation(),
    verifiedNonces: new Map(),
  });

  const router = express.Router();
  router.get('/', (req, res) => {
    const xrds = `${base}/?format=xrds`;
    if (wantsXrds(req)) return sendXrds(res, xrdsDocument({ type: 'server', endpoint }));
    res.set({ 'X-XRDS-Location': xrds, Vary: 'Accept' }).type('html');
    res.send(identifierPage({ title: 'Development OpenID provider', endpoint, xrds }));
  });
  router.get('/user/:name', (req, res) => {
    const name = req.params.name;
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name) || /^\.+$/.test(name))
      return void res.status(404).send('No such user.');
    const claimedId = `${base}/user/${name}`;
    const xrds = `${claimedId}?format=xrds`;
    if (wantsXrds(req)) return sendXrds(res, xrdsDocument({ type: 'signon', endpoint, localId: claimedId }));
    res.set({ 'X-XRDS-Location': xrds, Vary: 'Accept' }).type('html');
    res.send(identifierPage({ title: name, endpoint, localId: claimedId, xrds }));
  });
  router
    .route('/endpoint')
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
