import type { Request, RequestHandler } from 'express';
import { isIP } from 'node:net';
import { PROMETHEUS_CONTENT_TYPE, prometheusSink } from './prometheus.js';
import { recordFigures, type FigureSource } from './record.js';
import { FIGURES } from './series.js';

/** Options of {@link metricsRouter}. */
export interface MetricsRouterOptions {
  /** Where the figures are answered, under where the router is mounted. Default `/metrics`. */
  path?: string;
  /**
   * Who may read the figures. Default {@link loopbackOnly}: requests from this machine that no
   * proxy forwarded. A function that throws or rejects refuses (403). For a scraper on another
   * machine, check what it presents, a bearer token say:
   * `allow: (req) => req.get('authorization') === \`Bearer ${process.env.METRICS_TOKEN}\``.
   */
  allow?: (req: Request) => boolean | Promise<boolean>;
}

/** The router {@link metricsRouter} returns; `stop()` ends the recording. */
export interface MetricsRouter extends RequestHandler {
  /** Stops recording the server's figures (they stay as they were). Idempotent. */
  stop(): void;
}

/**
 * The server's figures ({@link FIGURES}) in the Prometheus text exposition format 0.0.4, at
 * `GET /metrics`: counters of token requests, authorizations, logins, client authentication
 * failures, replays, rate-limited requests, registrations, outbound calls and storage outages,
 * and a duration histogram per endpoint. Off until mounted; from the call on, the server's events
 * and requests are counted ({@link recordFigures}). The number of series does not grow with the
 * number of clients or users: no label holds a client id, a user or a token.
 *
 * Only requests from this machine are answered by default ({@link loopbackOnly}); others get 403.
 *
 * @example
 * import { metricsRouter } from 'openid-oauth-bridge/observability';
 * const metrics = metricsRouter(server); // loopback only
 * app.use(metrics); // GET /metrics
 * // on shutdown: metrics.stop();
 *
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/
 */
export function metricsRouter(server: FigureSource, options: MetricsRouterOptions = {}): MetricsRouter {
  const { path = '/metrics', allow = loopbackOnly } = options;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(`metricsRouter: path must start with "/" (got ${JSON.stringify(path)})`);
  }
  if (typeof allow !== 'function') {
    throw new TypeError('metricsRouter: allow must be a function of the request that returns a boolean');
  }
  const sink = prometheusSink(Object.values(FIGURES));
  const stop = recordFigures(server, sink);
  const handler: RequestHandler = (req, res, next) => {
    // Every request of the app may pass here: the URL as a string, not parsed (`req.path`).
    const { url } = req;
    if (!url.startsWith(path) || (url.length > path.length && url[path.length] !== '?')) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.status(405).set('Allow', 'GET, HEAD').end();
      return;
    }
    void allowed(allow, req)
      .then((ok) => {
        // A rule may answer by itself (a 401 with its own challenge), or a timeout before it
        // settles: what was sent stands.
        if (res.headersSent) return;
        res.set('Cache-Control', 'no-store');
        if (!ok) {
          res
            .status(403)
            .type('text/plain')
            .send('Forbidden: the metrics are not answered to this address.\n');
          return;
        }
        res.status(200).set('Content-Type', PROMETHEUS_CONTENT_TYPE).send(sink.text());
      })
      .catch(next);
  };
  return Object.assign(handler, { stop });
}

/** The host's rule, failing closed: a rule that throws or rejects refuses. */
async function allowed(allow: NonNullable<MetricsRouterOptions['allow']>, req: Request): Promise<boolean> {
  try {
    return (await allow(req)) === true;
  } catch {
    return false;
  }
}

/**
 * The default rule of {@link metricsRouter}: the request came from this machine (its connection
 * from 127.0.0.0/8, `::1` or `::ffff:127.x.x.x`) and no proxy forwarded it (no `Forwarded`,
 * `X-Forwarded-For` or `X-Real-IP`): a reverse proxy on this machine would otherwise pass on
 * anyone's request. It reads the connection's address, never `req.ip`, which `trust proxy` lets
 * a header choose.
 */
export function loopbackOnly(req: Request): boolean {
  const headers = req.headers;
  if (headers.forwarded !== undefined || headers['x-forwarded-for'] !== undefined) return false;
  if (headers['x-real-ip'] !== undefined) return false;
  return isLoopbackAddress(req.socket.remoteAddress);
}

/** 127.0.0.0/8, `::1`, or an IPv4-mapped 127.x.x.x. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(address) === 6 && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(address);
}
