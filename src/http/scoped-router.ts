import { Router, type ErrorRequestHandler, type NextFunction, type Request, type Response } from 'express';

/**
 * The busiest route of a router, run without a walk of the router's stack: one method and one
 * path, matched as Express matches a route by default (any case, an optional trailing slash).
 */
export interface DirectRoute {
  /** `GET` also takes `HEAD`, as an Express route does. */
  method: 'GET' | 'POST';
  path: string;
  /**
   * Answers the request, or calls `next()` to hand it to the router's stack as if this route were
   * not there. What it throws or rejects with goes to `errors`.
   */
  handle(req: Request, res: Response, next: () => void): void | Promise<void>;
  /** The router's error handler, for this route's errors. */
  errors: ErrorRequestHandler;
}

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
export function scopedRouter(serves: (path: string) => boolean, direct?: DirectRoute): Router {
  const router = Router();
  servedPaths.set(router, serves);
  const routed = router as Router & { handle(req: Request, res: Response, next: NextFunction): void };
  const handle = routed.handle.bind(router);
  const directPath = direct?.path.toLowerCase();
  routed.handle = (req, res, next) => {
    const url = req.url;
    if (url.charCodeAt(0) === 0x2f /* "/" */) {
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      if (!serves(path)) return next();
      if (direct && takes(direct.method, req.method) && isPath(path, directPath!)) {
        return runDirect(direct, req, res, () => handle(req, res, next), next);
      }
    }
    handle(req, res, next);
  };
  return router;
}

function takes(method: DirectRoute['method'], requested: string | undefined): boolean {
  return requested === method || (method === 'GET' && requested === 'HEAD');
}

/** `path` is `expected` (lower case), in any case, with or without a trailing slash. */
function isPath(path: string, expected: string): boolean {
  const length = path.length;
  if (length !== expected.length && !(length === expected.length + 1 && path.endsWith('/'))) return false;
  return path.slice(0, expected.length).toLowerCase() === expected;
}

function runDirect(
  route: DirectRoute,
  req: Request,
  res: Response,
  passOn: () => void,
  next: NextFunction,
): void {
  // Once the request was handed to the stack, the stack answers it: a later error of this route
  // goes to Express, never to a second answer from `errors`.
  let passed = false;
  const fail = (err: unknown) => {
    const error = err || new Error('Rejected promise');
    if (passed) return next(error);
    try {
      route.errors(error, req, res, next);
    } catch (failed) {
      next(failed);
    }
  };
  try {
    const done = route.handle(req, res, () => {
      passed = true;
      passOn();
    });
    if (done) done.catch(fail);
  } catch (err) {
    fail(err);
  }
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
