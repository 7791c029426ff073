import type { RequestHandler } from 'express';

/** One route of a {@link routeTable}. */
export interface Route {
  /** The path below the mount point, e.g. `/oauth/token`. */
  path: string;
  /** `GET` also takes `HEAD`, as an Express route does; `ALL` takes every method. */
  method: 'GET' | 'POST' | 'ALL';
  handler: RequestHandler;
}

/**
 * The library's routes as one middleware: a request whose path (below the mount point) and
 * method name a route goes to its handler, every other request on to the host's next handler
 * after one look-up. Paths match as Express matches routes by default: in any letter case, with
 * or without a trailing slash, whatever the query, and for any request-target form (Express's
 * `req.path`).
 */
export function routeTable(routes: readonly Route[]): RequestHandler {
  // A path has one route, or one per method (a page and the form it posts back to itself).
  const table = new Map<string, Route[]>();
  for (const route of routes) {
    const key = routeKey(route.path);
    const same = table.get(key) ?? [];
    if (same.some(({ method }) => method === route.method || method === 'ALL' || route.method === 'ALL')) {
      throw new Error(`two routes for ${route.method} ${route.path}`);
    }
    table.set(key, [...same, route]);
  }
  return function oauthRoutes(req, res, next) {
    const route = table.get(routeKey(req.path))?.find(({ method }) => takes(method, req.method));
    if (route === undefined) return next();
    route.handler(req, res, next);
  };
}

function takes(method: Route['method'], requested: string): boolean {
  return method === 'ALL' || requested === method || (method === 'GET' && requested === 'HEAD');
}

function routeKey(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}
