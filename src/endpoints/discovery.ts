import type { Router } from 'express';
import { scopedRouter } from '../http/scoped-router.js';
import type { AuthorizationServer } from '../server.js';
import { metadataHandler, metadataPath, type MetadataOptions } from './metadata.js';

/** The spec's root resource: where clients discover the endpoint URLs. */
export interface RootResource {
  oauth: { authorization: { href: string }; token: { href: string } };
}

/**
 * Serves the root resource at `GET /` of its mount point:
 * `{"oauth":{"authorization":{"href":...},"token":{"href":...}}}`. URLs are absolute and come
 * from the configured `baseUrl`, never from the request's `Host` header, so a forged host cannot
 * point clients elsewhere.
 *
 * Alongside it, the authorization server metadata (RFC 8414) at
 * `GET /.well-known/oauth-authorization-server` followed by the path of `baseUrl`: the right
 * place when the router is mounted at the origin root. Otherwise mount `metadataRouter` there.
 *
 * @example
 * app.use(discoveryRouter(server));
 */
export function discoveryRouter(server: AuthorizationServer, options: MetadataOptions = {}): Router {
  const body: RootResource = {
    oauth: { authorization: { href: server.urls.authorization }, token: { href: server.urls.token } },
  };
  const json = JSON.stringify(body);
  const metadata = metadataPath(server);
  // The root resource, and the metadata document when mounted at the origin root.
  const router = scopedRouter((path) => path === '/' || path === metadata);
  router.get('/', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('json').send(json);
  });
  router.use(metadataHandler(server, options));
  return router;
}
