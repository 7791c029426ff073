import { Router, type NextFunction, type Request, type Response } from 'express';
import { servesOf } from '../http/scoped-router.js';
import type { AuthorizationServer } from '../server.js';
import { applicationsRouter } from './applications.js';
import { authorizeRouter } from './authorize/router.js';
import { discoveryRouter } from './discovery.js';
import { introspectionRouter, type IntrospectionRouterOptions } from './introspection.js';
import type { MetadataOptions } from './metadata.js';
import { revocationRouter } from './revocation.js';
import { tokenRouter } from './token/router.js';

export interface OAuthRouterOptions extends MetadataOptions, IntrospectionRouterOptions {
  /**
   * Serve the root resource at `GET /` of the mount point, and the metadata when mounted at the
   * origin root (`discoveryRouter`). Default `true`; set `false` when your app answers `GET /`
   * itself, and mount `discoveryRouter` where your clients expect it.
   */
  discovery?: boolean;
  /** Serve the signed-in user's authorized applications (`applicationsRouter`). Default `true`. */
  applications?: boolean;
  /** `revocation: false` leaves out `revocationRouter`, and its URL from the metadata. */
  revocation?: boolean;
  /** `introspection: false` leaves out `introspectionRouter`, and its URL from the metadata. */
  introspection?: boolean;
}

/**
 * Every endpoint of the authorization server in one router: `authorizeRouter`, `tokenRouter`,
 * `discoveryRouter`, `revocationRouter`, `introspectionRouter` and `applicationsRouter`. Mount it
 * at the path of `baseUrl`, in front of your own routes.
 *
 * It is one layer of your app: a request for any other path (`GET /v1/realms`, say) is handed on
 * after one look at its path, where each router mounted on its own would take a turn of Express's
 * router. A request for one of its paths goes straight to the router that serves it. Mount the
 * routers one by one instead when they need different mount points or middleware in front.
 *
 * @example
 * app.use(oauthRouter(server));
 * app.get('/v1/realms', requireBearer(server), (req, res) => res.json(realmsOf(bearerOf(res).userId)));
 */
export function oauthRouter(server: AuthorizationServer, options: OAuthRouterOptions = {}): Router {
  const { discovery = true, applications = true, revocation = true, introspection = true } = options;
  const routers = [
    // The two busiest first: they are looked at in this order.
    tokenRouter(server),
    authorizeRouter(server),
    discovery ? discoveryRouter(server, options) : undefined,
    revocation ? revocationRouter(server) : undefined,
    introspection ? introspectionRouter(server, options) : undefined,
    applications ? applicationsRouter(server) : undefined,
  ].filter((router) => router !== undefined);
  const parts = routers.map((router) => {
    const serves = servesOf(router);
    if (!serves) throw new Error('oauthRouter: every router must come from scopedRouter');
    return { router, serves };
  });

  // Requests whose URL is not a plain path (the absolute form) go through every router in turn.
  const everyRouter = Router();
  everyRouter.use(...routers);
  const all = everyRouter as Router & { handle(req: Request, res: Response, next: NextFunction): void };
  const combined = Router() as Router & { handle(req: Request, res: Response, next: NextFunction): void };
  combined.handle = (req, res, next) => {
    const url = req.url;
    if (url.charCodeAt(0) !== 0x2f /* "/" */) return all.handle(req, res, next);
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    for (const { router, serves } of parts) if (serves(path)) return router(req, res, next);
    next();
  };
  return combined;
}
