import type { Request } from 'express';
import { isIPv6 } from 'node:net';
import type { AuthorizationServer } from '../../config/server.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import type { RateLimitExceededEvent } from '../../events/types.js';
import { ephemeralKeys } from '../../storage/keys.js';

/** One limit a request falls under: its counter's ephemeral key and the failures it allows. */
export interface Limit {
  key: string;
  max: number;
  /** Counted per address, or per `client_id`. */
  per: 'address' | 'client';
}

/**
 * The rate limits on failed client authentications (RFC 6819 5.1.4.2.3) a request falls under:
 * per address, then per `client_id` (unknown ids counted like known ones), in fixed windows
 * counted with the ephemeral store's `increment`, which is atomic and shared by every instance on
 * the storage. None when the limits are off.
 *
 * @see RFC 6819 section 5.1.4.2.3
 */
export function clientAuthLimits(
  server: AuthorizationServer,
  req: Request,
  clientId: string | undefined,
): Limit[] {
  const settings = server.options.rateLimit;
  if (settings === false) return [];
  const limits: Limit[] = [];
  if (settings.maxFailuresPerAddress !== false) {
    const address = addressKey(server, req);
    if (address !== undefined) {
      limits.push({
        key: ephemeralKeys.rateLimit(`address:${address}`),
        max: settings.maxFailuresPerAddress,
        per: 'address',
      });
    }
  }
  if (settings.maxFailuresPerClient !== false && clientId !== undefined) {
    limits.push({
      key: ephemeralKeys.rateLimit(`client:${clientId}`),
      max: settings.maxFailuresPerClient,
      per: 'client',
    });
  }
  return limits;
}

/**
 * Applies the limits to one request, given their counters as read before it (`counts`, in the
 * order of `limits`). Past a limit every request under that key is refused with 429 and
 * `Retry-After`, the right secret included, so the limit cannot tell a right guess from a wrong
 * one. A failure (`failed`) is counted under each key in turn until one is over its limit. A
 * success is never counted, not even while it is in flight (a busy client's concurrent requests
 * are not refused); one whose key is at its limit is refused like a failure. Resolves when the
 * request may go on; `undefined` when nothing is left to count.
 *
 * @see RFC 6585 section 4 (429)
 */
export function applyClientAuthLimits(
  server: AuthorizationServer,
  req: Request,
  limits: readonly Limit[],
  counts: readonly (string | null)[],
  failed: boolean,
): Promise<void> | undefined {
  const counted = failed
    ? limits
    : limits.filter(({ max }, i) => counts[i] != null && Number(counts[i]) >= max);
  if (counted.length === 0 || server.options.rateLimit === false) return undefined;
  return count(server, req, counted, server.options.rateLimit.windowMs);
}

/**
 * Counts a failure under each key in turn; the first key over its limit refuses the request. A
 * success at its limit is counted too, to learn when the window ends.
 */
async function count(
  server: AuthorizationServer,
  req: Request,
  limits: readonly Limit[],
  windowMs: number,
): Promise<void> {
  for (const { key, max, per } of limits) {
    const wait = await countInWindow(server, key, max, windowMs);
    if (wait !== undefined) {
      const description = 'Too many failed client authentications. Try again later.';
      throw overLimit(server, req, { limit: 'client_authentication', per }, description, wait);
    }
  }
}

/**
 * Counts one more under `key` in a fixed window of `windowMs` that starts with its first count
 * (`ephemeral.increment`: atomic, shared by every instance). Resolves the seconds until the window
 * ends (a `Retry-After`) when the count is over `max`, else `undefined`. Every rate limit of the
 * library counts with it.
 */
export async function countInWindow(
  server: AuthorizationServer,
  key: string,
  max: number,
  windowMs: number,
): Promise<number | undefined> {
  const now = server.clock();
  const counter = await server.storage.ephemeral.increment(key, now + windowMs, now);
  return counter.count > max ? Math.max(1, Math.ceil((counter.expiresAt - now) / 1000)) : undefined;
}

type Exceeded = Pick<RateLimitExceededEvent, 'limit' | 'per'>;

/**
 * A request refused by a rate limit: reported as a `rate_limit.exceeded` event (by the limit's
 * name, what metrics count it by), answered with {@link tooMany}.
 */
export function overLimit(
  server: AuthorizationServer,
  req: Request,
  exceeded: Exceeded,
  description: string,
  retryAfterSeconds: number,
): OAuthError {
  reportOverLimit(server, req, exceeded);
  return tooMany(description, retryAfterSeconds);
}

/** Reports a request refused by a rate limit, for a limit that answers in its own way (a page). */
export function reportOverLimit(server: AuthorizationServer, req: Request, { limit, per }: Exceeded): void {
  emit(server, { type: 'rate_limit.exceeded', limit, per, ...eventContext(req) });
}

/** 429 `temporarily_unavailable` with `Retry-After` (RFC 6585 4). */
export function tooMany(description: string, retryAfterSeconds: number): OAuthError {
  return new OAuthError('temporarily_unavailable', description, {
    httpStatus: 429,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/**
 * The address a request is counted under: `req.ip` (so the host's `trust proxy` setting applies);
 * an IPv6 address by its /56, one site's usual allocation, or as the IPv4 address it carries.
 */
export function addressKey(server: AuthorizationServer, req: Request): string | undefined {
  warnOfProxySetting(server, req);
  const ip = req.ip;
  return ip !== undefined && isIPv6(ip) ? ipv6Key(ip) : ip;
}

/** `::ffff:192.0.2.1` and `::192.0.2.1` count as `192.0.2.1`; any other address as its /56 network. */
function ipv6Key(ip: string): string {
  const groups = ipv6Groups(ip);
  const embedsIPv4 =
    groups.slice(0, 5).every((group) => group === 0) &&
    (groups[5] === 0xffff || (groups[5] === 0 && ip.includes('.')));
  if (embedsIPv4) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  const network = [groups[0]!, groups[1]!, groups[2]!, groups[3]! & 0xff00];
  // Groups 4 to 7 are zero, the longest run: RFC 5952 compresses it (and any zeros before it).
  while (network.at(-1) === 0) network.pop();
  return `${network.map((group) => group.toString(16)).join(':')}::/56`;
}

/** The eight 16-bit groups of a valid IPv6 address (`net.isIPv6`), zone id dropped. */
function ipv6Groups(ip: string): number[] {
  let text = ip.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const first = parse(head);
  const last = tail === undefined ? [] : parse(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

/** Settings of the host's that make the per-address limit count the wrong address. */
const proxyWarnings: { applies: (req: Request) => boolean; message: string }[] = [
  {
    applies: (req) => req.app.get('trust proxy') === true,
    message:
      "The Express 'trust proxy' setting is true: anyone can choose their address with X-Forwarded-For and escape the per-address limit. Set it to your proxies.",
  },
  {
    applies: (req) => req.headers['x-forwarded-for'] !== undefined && req.app.get('trust proxy') === false,
    message:
      "The 'X-Forwarded-For' header is set but the Express 'trust proxy' setting is false: every client behind the proxy counts under the proxy's address. Set 'trust proxy' to your proxies.",
  },
  {
    applies: (req) => req.headers.forwarded !== undefined && req.ip === req.socket.remoteAddress,
    message:
      "The 'Forwarded' header is set, but Express reads only X-Forwarded-For: every client behind the proxy counts under the proxy's address.",
  },
];

function warnOfProxySetting(server: AuthorizationServer, req: Request): void {
  for (const { applies, message } of proxyWarnings) {
    if (applies(req)) server.warnOnce(`rate limit: ${message}`);
  }
}
