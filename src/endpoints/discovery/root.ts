import type { RequestHandler } from 'express';
import type { AuthorizationServer } from '../../config/server.js';

/** The spec's root resource: where clients discover the endpoint URLs. */
export interface RootResource {
  oauth: { authorization: { href: string }; token: { href: string } };
}

/**
 * `GET /`: the root resource, `{"oauth":{"authorization":{"href":...},"token":{"href":...}}}`.
 * The URLs are absolute and come from the configured `baseUrl`, never from the request's `Host`
 * header, so a forged host cannot point clients elsewhere. A fixed document: built once.
 */
export function rootResource(server: AuthorizationServer): RequestHandler {
  const body: RootResource = {
    oauth: { authorization: { href: server.urls.authorization }, token: { href: server.urls.token } },
  };
  const json = JSON.stringify(body);
  return (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('json').send(json);
  };
}
