import { Router, type NextFunction, type Request, type Response } from 'express';

/**
 * An Express Router that looks only at requests whose path it may serve, and hands every other
 * request on at once. A host mounts several of the library's routers in front of its own routes
 * (`GET /v1/realms` behind `requireBearer`, say); without this, each of those requests would walk
 * every router's stack of layers, which costs more than the bearer check itself.
 *
 * `serves` sees the path relative to where the router is mounted, without the query. A request
 * whose URL is not a plain path (the absolute form of RFC 9112 3.2.2) always goes through the
 * router, which knows how to read it.
 */
export function scopedRouter(serves: (path: string) => boolean): Router {
  const router = Router();
  servedPaths.set(router, serves);
  const routed = router as Router & { handle(req: Request, res: Response, next: NextFunction): void };
  const handle = routed.handle.bind(router);
  routed.handle = (req, res, next) => {
    const url = req.url;
    if (url.charCodeAt(0) === 0x2f /* "/" */) {
      const query = url.indexOf('?');
      if (!serves(query === -1 ? url : url.slice(0, query))) return next();
    }
    handle(req, res, next);
  };
  return router;
}

const servedPaths = new WeakMap<Router, (path: string) => boolean>();

/** The paths a router made by {@link scopedRouter} serves, as it was told. */
export function servesOf(router: Router): ((path: string) => boolean) | undefined {
  return servedPaths.get(router);
}

/**
 * Paths equal to or below one of `prefixes`, compared without regard to case as Express compares
 * its routes by default.
 */
export function pathsUnder(...prefixes: string[]): (path: string) => boolean {
  const lowered = prefixes.map((prefix) => prefix.toLowerCase());
  const parents = lowered.map((prefix) => `${prefix}/`);
  return (path) => {
    const lower = path.toLowerCase();
    for (let i = 0; i < lowered.length; i++) {
      if (lower === lowered[i] || lower.startsWith(parents[i]!)) return true;
    }
    return false;
  };
}
