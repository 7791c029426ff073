import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { IDENTIFIER_SELECT, OPENID2_NS } from '../../login/openid/constants.js';
import { encodeKeyValueForm } from '../../login/openid/key-value-form.js';
import { parseHttpUrl, returnToMatchesRealm } from '../../login/openid/realm.js';
import { parseResponseNonce } from '../../login/openid/response-nonce.js';
import { SREG_NS } from '../../login/openid/sreg.js';
import { TEAMS_NS } from '../../login/openid/teams.js';
import type { PrivateAssociation } from './association.js';
import { loginForm } from './pages.js';
import { claimedIdPath, type Shape } from './shapes.js';

/** What the endpoint of one provider instance works with; no module state. */
export interface EndpointContext {
  /** Base URL without trailing slash. */
  base: string;
  endpoint: string;
  /** Which real provider it looks like: its claimed identifiers and extensions. */
  shape: Shape;
  association: PrivateAssociation;
  users: readonly string[];
  /** The teams of each user name (Launchpad's shape). */
  teams: Readonly<Record<string, readonly string[]>>;
  /** Nonces already confirmed by check_authentication, with the time they may be forgotten. */
  verifiedNonces: Map<string, number>;
}

const USER_NAME = /^[A-Za-z0-9._-]{1,64}$/;
const SIGNED = ['op_endpoint', 'claimed_id', 'identity', 'return_to', 'response_nonce', 'assoc_handle'];
/** Nonces are remembered this long, and older ones are never confirmed. */
const NONCE_RETENTION_MS = 60 * 60 * 1000;
const REQUEST_FIELDS = [
  'openid.ns',
  'openid.mode',
  'openid.claimed_id',
  'openid.identity',
  'openid.return_to',
  'openid.realm',
  'openid.ns.sreg',
  'openid.sreg.required',
  'openid.sreg.optional',
  'openid.ns.lp',
  'openid.lp.query_membership',
];

/**
 * The OP endpoint: `checkid_setup` (login form and its submission), `checkid_immediate`
 * (always `setup_needed`), `check_authentication` and `associate` (refused).
 *
 * @see OpenID 2.0 sections 8, 9, 10 and 11.4.2
 */
export function endpointHandler(ctx: EndpointContext): RequestHandler {
  return (req, res) => {
    const params = readParams(req);
    if (params === null) return void res.status(400).type('text').send('Each parameter must appear once.');
    const mode = params.get('openid.mode');
    if (req.method === 'POST' && mode === 'check_authentication')
      return checkAuthentication(ctx, params, res);
    if (req.method === 'POST' && mode === 'associate') {
      // Stateless mode only: the RP confirms every assertion directly, so there is no shared key
      // to negotiate, store or leak, and no Diffie-Hellman code to get wrong in a dev tool.
      return directError(res, 'This development provider supports stateless mode only.', 'unsupported-type');
    }
    if (mode !== 'checkid_setup' && mode !== 'checkid_immediate') {
      return req.method === 'POST'
        ? directError(res, 'Unknown or missing openid.mode.')
        : void res
            .status(400)
            .type('text')
            .send('This is an OpenID 2.0 endpoint; it expects an OpenID request.');
    }
    const request = parseAuthRequest(ctx, params);
    if (typeof request === 'string') return void res.status(400).type('text').send(request);
    if (mode === 'checkid_immediate')
      return redirectTo(res, request.returnTo, [['openid.mode', 'setup_needed']]);
    const action = req.method === 'POST' ? params.get('dev_action') : undefined;
    if (action === 'cancel') return redirectTo(res, request.returnTo, [['openid.mode', 'cancel']]);
    const user = params.get('dev_user') ?? '';
    if (
      action !== 'signin' ||
      !USER_NAME.test(user) ||
      /^\.+$/.test(user) ||
      (request.fixedUser ?? user) !== user
    ) {
      const error =
        action === 'signin'
          ? 'Enter a user name of 1 to 64 letters, digits, dots, dashes or underscores.'
          : undefined;
      const fields = new Map(
        REQUEST_FIELDS.flatMap((k) => (params.has(k) ? [[k, params.get(k)!] as const] : [])),
      );
      res
        .status(error === undefined ? 200 : 400)
        .set(pageHeaders)
        .type('html');
      return void res.send(
        loginForm({
          endpoint: ctx.endpoint,
          realm: request.realm,
          fields,
          users: ctx.users,
          fixedUser: request.fixedUser,
          error,
        }),
      );
    }
    const claimedId = `${ctx.base}${claimedIdPath(ctx.shape, user)}`;
    return redirectTo(
      res,
      request.returnTo,
      positiveAssertion(ctx, request.returnTo, claimedId, [
        ...sregOf(ctx, params, user),
        ...teamsOf(ctx, params, user),
      ]),
    );
  };
}

interface AuthRequest {
  returnTo: string;
  realm: string;
  fixedUser?: string;
}

/** Section 9: checks an authentication request, or returns why it is refused. */
function parseAuthRequest(ctx: EndpointContext, params: ReadonlyMap<string, string>): AuthRequest | string {
  if (params.get('openid.ns') !== OPENID2_NS) return 'Only OpenID 2.0 requests are supported.';
  const returnTo = params.get('openid.return_to') ?? '';
  if (parseHttpUrl(returnTo) === null) return 'openid.return_to must be an absolute http(s) URL.';
  const realm = params.get('openid.realm') ?? returnTo;
  if (!returnToMatchesRealm(returnTo, realm)) return 'openid.return_to does not fall under openid.realm.';
  const claimedId = params.get('openid.claimed_id');
  const identity = params.get('openid.identity');
  if (claimedId === undefined || identity === undefined)
    return 'This provider needs openid.claimed_id and openid.identity.';
  if (claimedId === IDENTIFIER_SELECT && identity === IDENTIFIER_SELECT) return { returnTo, realm };
  const prefix = `${ctx.base}${ctx.shape.claimedIdPrefix}`;
  const id = identity.startsWith(prefix) ? identity.slice(prefix.length) : '';
  const name = ctx.shape.isClaimedId(id) ? (ctx.shape.nameOf(id) ?? '') : '';
  if (claimedId !== identity || !USER_NAME.test(name))
    return 'This provider does not know the requested identifier.';
  return { returnTo, realm, fixedUser: name };
}

/**
 * The signed Simple Registration answer of a shape that gives one, when the request asks for it
 * (sreg 1.1): the user name as `nickname`, and as `fullname` with a capital.
 */
function sregOf(ctx: EndpointContext, params: ReadonlyMap<string, string>, user: string): [string, string][] {
  if (!ctx.shape.sreg || params.get('openid.ns.sreg') !== SREG_NS) return [];
  const asked = new Set(
    [params.get('openid.sreg.required'), params.get('openid.sreg.optional')].flatMap(
      (list) => list?.split(',') ?? [],
    ),
  );
  const values: [string, string][] = [];
  if (asked.has('nickname')) values.push(['openid.sreg.nickname', user]);
  if (asked.has('fullname'))
    values.push(['openid.sreg.fullname', user.charAt(0).toUpperCase() + user.slice(1)]);
  return values.length === 0 ? [] : [['openid.ns.sreg', SREG_NS], ...values];
}

/**
 * The signed teams answer of a shape that gives one (Launchpad's), when the request asks about
 * teams and the user is in the `teams` option: those of them the user belongs to (`is_member`,
 * empty when none), as Launchpad answers. A user not in the option gets no answer at all, as from
 * a provider without the extension.
 */
function teamsOf(
  ctx: EndpointContext,
  params: ReadonlyMap<string, string>,
  user: string,
): [string, string][] {
  const member = ctx.teams[user];
  if (!ctx.shape.sreg || params.get('openid.ns.lp') !== TEAMS_NS || member === undefined) return [];
  const asked = (params.get('openid.lp.query_membership') ?? '').split(',');
  return [
    ['openid.ns.lp', TEAMS_NS],
    ['openid.lp.is_member', asked.filter((team) => member.includes(team)).join(',')],
  ];
}

function positiveAssertion(
  ctx: EndpointContext,
  returnTo: string,
  claimedId: string,
  extensions: [string, string][] = [],
): [string, string][] {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const fields = new Map<string, string>([
    ['openid.mode', 'id_res'],
    ['openid.op_endpoint', ctx.endpoint],
    ['openid.claimed_id', claimedId],
    ['openid.identity', claimedId],
    ['openid.return_to', returnTo],
    ['openid.response_nonce', `${now}${randomBytes(12).toString('base64url')}`],
    ['openid.assoc_handle', ctx.association.handle],
    ...extensions,
  ]);
  const signed = [...SIGNED, ...extensions.map(([key]) => key.slice('openid.'.length))];
  fields.set('openid.signed', signed.join(','));
  fields.set('openid.sig', ctx.association.sign(fields, signed));
  return [...fields];
}

/** Section 11.4.2.1: verify with the private association, and at most once per response nonce. */
function checkAuthentication(ctx: EndpointContext, params: ReadonlyMap<string, string>, res: Response): void {
  const now = Date.now();
  for (const [nonce, forgetAt] of ctx.verifiedNonces) if (forgetAt <= now) ctx.verifiedNonces.delete(nonce);
  const nonce = params.get('openid.response_nonce') ?? '';
  const issued = parseResponseNonce(nonce);
  const signed = (params.get('openid.signed') ?? '').split(',');
  const valid =
    params.get('openid.ns') === OPENID2_NS &&
    // The nonce must be signed, or one signature would confirm any number of nonces.
    signed.includes('response_nonce') &&
    params.get('openid.assoc_handle') === ctx.association.handle &&
    issued !== null &&
    now - issued < NONCE_RETENTION_MS &&
    !ctx.verifiedNonces.has(nonce) &&
    ctx.association.verify(params, signed, params.get('openid.sig') ?? '');
  if (valid) ctx.verifiedNonces.set(nonce, issued + NONCE_RETENTION_MS);
  res
    .status(200)
    .type('text/plain')
    .send(
      encodeKeyValueForm([
        ['ns', OPENID2_NS],
        ['is_valid', String(valid)],
      ]),
    );
}

/** Section 5.1.2.2: a direct error response. */
function directError(res: Response, error: string, code?: string): void {
  const fields: [string, string][] = [
    ['ns', OPENID2_NS],
    ['error', error],
  ];
  if (code !== undefined) fields.push(['error_code', code]);
  res.status(400).type('text/plain').send(encodeKeyValueForm(fields));
}

/** Section 5.2.1: an indirect response, appended to `return_to`. */
function redirectTo(res: Response, returnTo: string, fields: [string, string][]): void {
  const url = new URL(returnTo);
  url.searchParams.set('openid.ns', OPENID2_NS);
  for (const [key, value] of fields) url.searchParams.set(key, value);
  res.set('Cache-Control', 'no-store').redirect(302, url.href);
}

/** The request's parameters (query for GET, form body for POST), or `null` if one repeats. */
function readParams(req: Request): Map<string, string> | null {
  const source: unknown = req.method === 'POST' ? req.body : req.query;
  const params = new Map<string, string>();
  for (const [key, value] of Object.entries(typeof source === 'object' && source !== null ? source : {})) {
    if (typeof value !== 'string') return null;
    params.set(key, value);
  }
  return params;
}

const pageHeaders = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
};
