import type { Request, RequestHandler } from 'express';
import {
  ipKeyGenerator,
  rateLimit,
  type ClientRateLimitInfo,
  type Options,
  type Store,
} from 'express-rate-limit';
import { OAuthError } from '../../errors/oauth-error.js';
import type { AuthorizationServer } from '../../server.js';
import { ephemeralKeys } from '../../storage/keys.js';
import type { EphemeralCounter, EphemeralStore } from '../../storage/types.js';
import { presentedClientId } from './credentials.js';

/** IPv6 addresses are counted per /56, express-rate-limit's default: one site's usual allocation. */
const IPV6_SUBNET = 56;

/** A store the limiter can also read without counting. */
type ReadableStore = Store & { get(key: string): Promise<ClientRateLimitInfo | undefined> };

/** A counter's stored value as a count, 0 when none. */
const countOf = (value: string | null): number => (value === null ? 0 : Number(value));

/**
 * The rate limits on failed client authentications (RFC 6819 5.1.4.2.3): per address, then per
 * `client_id`, each answering 429 with `Retry-After` once over its limit. They run after the
 * credentials were checked, so a success is never counted (not even while it is in flight, which
 * would refuse a busy client's concurrent requests); but once a key is over its limit every
 * request with it is refused, the right secret included, so the limit cannot be used to tell a
 * right guess from a wrong one. Unknown clients are counted like known ones.
 *
 * Resolves when the request may go on, rejects with the 429 otherwise; `undefined` when the
 * limits are off. A success reads both counters at once and goes on when neither is over its
 * limit: the common case never enters express-rate-limit. A failure, or a success with a key
 * over its limit, goes through the express-rate-limit middlewares in order, which count it and
 * refuse it. One limiter per server, built at its first use.
 */
export function clientAuthRateLimit(server: AuthorizationServer): RateLimit | undefined {
  if (!limiters.has(server)) limiters.set(server, buildLimits(server));
  return limiters.get(server);
}

/**
 * Counts (`failed`) or checks one request, reading the counters through `counters` (the
 * request's view of the storage, which may have read them already: {@link rateLimitReads}).
 */
type RateLimit = ((req: Request, failed: boolean, counters: EphemeralStore) => Promise<void>) & {
  /** The counter keys a check of `req` reads. */
  readonly keys: (req: Request) => string[];
};

const limiters = new WeakMap<AuthorizationServer, RateLimit | undefined>();

function buildLimits(server: AuthorizationServer): RateLimit | undefined {
  const settings = server.options.rateLimit;
  if (settings === false) return undefined;
  const limits: Limit[] = [];
  if (settings.maxFailuresPerAddress !== false) {
    limits.push(
      limiter(server, 'address', settings.maxFailuresPerAddress, settings.windowMs, (req) => {
        const ip = req.ip;
        // ipKeyGenerator returns anything but an IPv6 address as it is: skip its IPv6 test.
        return ip === undefined || !ip.includes(':') ? ip : ipKeyGenerator(ip, IPV6_SUBNET);
      }),
    );
  }
  if (settings.maxFailuresPerClient !== false) {
    limits.push(
      limiter(server, 'client', settings.maxFailuresPerClient, settings.windowMs, presentedClientId),
    );
  }
  if (limits.length === 0) return undefined;
  const check = async (req: Request, failed: boolean, counters: EphemeralStore) => {
    // A success enters only the limits its keys are over; a failure, every limit.
    const entered = failed
      ? limits
      : await Promise.all(limits.map((limit) => limit.read(req, counters))).then((counted) =>
          limits.filter((limit, i) => counted[i]! >= limit.limit),
        );
    for (const { middleware } of entered) await runMiddleware(middleware, req);
  };
  const keys = (req: Request) => limits.flatMap((limit) => limit.counterKey(req) ?? []);
  return Object.assign(check, { keys });
}

/** Runs an express-rate-limit middleware, which ends by calling `next()` or `next(error)`. */
function runMiddleware(middleware: RequestHandler, req: Request): Promise<void> {
  return new Promise((resolve, reject) => {
    void middleware(req, req.res!, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
  });
}

/** One limit: its express-rate-limit middleware, and a read of its key's count (0: none). */
interface Limit {
  limit: number;
  middleware: RequestHandler;
  /** The ephemeral key of the request's counter, if the request has a key. */
  counterKey(req: Request): string | undefined;
  read(req: Request, counters: EphemeralStore): Promise<number>;
}

function limiter(
  server: AuthorizationServer,
  kind: 'address' | 'client',
  limit: number,
  windowMs: number,
  keyOf: (req: Request) => string | undefined,
): Limit {
  const store = new StorageRateLimitStore(server.storage.ephemeral, server.clock, `${kind}:`);
  const now = server.clock;
  const counterKey = (req: Request): string | undefined => {
    const key = keyOf(req);
    return key === undefined ? undefined : store.counterKey(key);
  };
  const read = (req: Request, counters: EphemeralStore): Promise<number> => {
    const key = counterKey(req);
    return key === undefined ? Promise.resolve(0) : counters.get(key, now()).then(countOf);
  };
  const middleware = rateLimit({
    windowMs,
    limit,
    store,
    // The address key is express-rate-limit's own (with its checks of the `trust proxy` setting);
    // `keyOf` computes the same key for the reads.
    ...(kind === 'address' ? { ipv6Subnet: IPV6_SUBNET } : { keyGenerator: (req: Request) => keyOf(req)! }),
    // Entered only for a failure or a key over its limit (see above): count it unless unkeyed.
    skip: (req) => keyOf(req) === undefined,
    // Only Retry-After: the remaining count is nobody's business.
    legacyHeaders: false,
    standardHeaders: false,
    // Namespaced so a host's own express-rate-limit keeps its `req.rateLimit`.
    requestPropertyName: 'openidOAuthBridgeRateLimit',
    handler(req) {
      const resetTime = (req as Request & { openidOAuthBridgeRateLimit?: ClientRateLimitInfo })
        .openidOAuthBridgeRateLimit?.resetTime;
      const seconds = resetTime ? Math.ceil((resetTime.getTime() - now()) / 1000) : windowMs / 1000;
      throw new OAuthError(
        'temporarily_unavailable',
        'Too many failed client authentications. Try again later.',
        { httpStatus: 429, headers: { 'Retry-After': String(Math.max(1, seconds)) } },
      );
    },
    logger: {
      warn: (error, message) => server.logger.warn(`rate limit: ${message ?? describe(error)}`, { error }),
      error: (error, message) => server.logger.error(`rate limit: ${message ?? describe(error)}`, { error }),
    },
  });
  return { limit, middleware, counterKey, read };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * An express-rate-limit store over the storage's ephemeral counters, so that every instance
 * sharing the storage shares the counts.
 */
class StorageRateLimitStore implements ReadableStore {
  /** Counts are shared with other instances (express-rate-limit's double-count check reads this). */
  readonly localKeys = false;
  #windowMs = 60_000;

  constructor(
    private readonly counters: EphemeralStore,
    private readonly clock: () => number,
    readonly prefix: string,
  ) {}

  init(options: Options): void {
    this.#windowMs = options.windowMs;
  }

  /** The count alone: when the window ends is known only to {@link increment}. */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const hits = await this.hits(key);
    return hits === 0 ? undefined : { totalHits: hits, resetTime: undefined };
  }

  /** The key's count in the current window, 0 when none. */
  async hits(key: string): Promise<number> {
    return countOf(await this.counters.get(this.counterKey(key), this.clock()));
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const now = this.clock();
    return info(await this.counters.increment(this.counterKey(key), now + this.#windowMs, now));
  }

  /** Never called: these limiters count failures only and never take a count back. */
  async decrement(): Promise<void> {}

  async resetKey(key: string): Promise<void> {
    await this.counters.delete(this.counterKey(key));
  }

  /** The ephemeral key of `key`'s counter. */
  counterKey(key: string): string {
    return ephemeralKeys.rateLimit(this.prefix + key);
  }
}

function info(counter: EphemeralCounter): ClientRateLimitInfo {
  return { totalHits: counter.count, resetTime: new Date(counter.expiresAt) };
}
