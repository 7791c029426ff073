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
  const table = new Map<string, Route>();
  for (const route of routes) {
    const key = routeKey(route.path);
    if (table.has(key)) throw new Error(`two routes for ${route.path}`);
    table.set(key, route);
  }
  return function oauthRoutes(req, res, next) {
    const route = table.get(routeKey(req.path));
    if (route === undefined || !takes(route.method, req.method)) return next();
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
