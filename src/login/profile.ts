import { emit, type EventContext, type EventTarget } from '../events/emit.js';
import type { Logger } from '../events/emitter.js';
import type { Storage } from '../storage/types.js';
import type { ProfileUnavailableEvent } from '../events/types.js';
import { boundedFetch, FetchRefusedError } from '../net/bounded-fetch.js';
import { traceOutbound } from '../observability/channels.js';
import type { ProfileFacts, ProfileSource } from './openid/provider-policy.js';
import { ephemeralKeys } from '../storage/keys.js';

/** The largest profile answer read. */
const MAX_PROFILE_BYTES = 64 * 1024;
/** How long a failed read is remembered: the API is not asked again by every login meanwhile. */
const FAILURE_CACHE_MS = 60_000;

/** What reading a profile needs of the server (an `AuthorizationServer` is one). */
export interface ProfileReader extends EventTarget {
  readonly storage: Pick<Storage, 'ephemeral'>;
  readonly logger: Logger;
}

type Outcome = { facts: ProfileFacts } | { unavailable: ProfileUnavailableEvent['reason'] };

/** How a read that found no profile is traced: a private profile is an answer, not a failure. */
const UNAVAILABLE: Record<ProfileUnavailableEvent['reason'], string | undefined> = {
  private: undefined,
  timeout: 'timeout',
  too_large: 'too_large',
  bad_status: 'status',
  malformed: 'invalid',
  error: 'failed',
};

/**
 * The public profile of an account from its provider's {@link ProfileSource} (Steam's Web API),
 * or `undefined`. It never fails a login: a private profile, a timeout, an error or a malformed
 * answer is reported as a `profile.unavailable` event and the login goes on without it. The
 * outcome is cached in the ephemeral store (a profile for the source's `cacheSeconds`, a failure
 * for a minute), so a burst of logins spends one request per account. The source's URL carries
 * its API key: neither the URL nor the key goes into an event, a log line or an error.
 */
export async function readProfile(
  server: ProfileReader,
  provider: string,
  source: ProfileSource,
  accountKey: string,
  context: () => EventContext,
): Promise<ProfileFacts | undefined> {
  const key = ephemeralKeys.profile(provider, accountKey);
  const cached = await server.storage.ephemeral.get(key, server.clock());
  const outcome =
    cached === null
      ? await traceOutbound(
          // The one profile source is Steam's Web API; traced without the URL, which holds the key.
          { call: 'steam_web_api', provider },
          () => fetchProfile(server, source, accountKey),
          (read) => ('unavailable' in read ? UNAVAILABLE[read.unavailable] : undefined),
        )
      : (JSON.parse(cached) as Outcome);
  if (cached === null) {
    const now = server.clock();
    const lifetime =
      'facts' in outcome || outcome.unavailable === 'private' ? source.cacheSeconds * 1000 : FAILURE_CACHE_MS;
    await server.storage.ephemeral.set(key, JSON.stringify(outcome), now + lifetime, now);
  }
  if ('facts' in outcome) return outcome.facts;
  emit(server, {
    type: 'profile.unavailable',
    provider,
    source: source.name,
    reason: outcome.unavailable,
    cached: cached !== null,
    ...context(),
  });
  return undefined;
}

async function fetchProfile(
  server: ProfileReader,
  source: ProfileSource,
  accountKey: string,
): Promise<Outcome> {
  const url = source.url(accountKey);
  try {
    const res = await boundedFetch(url, {
      timeoutMs: source.timeoutMs,
      maxBytes: MAX_PROFILE_BYTES,
      // The API's own origin only: a redirect anywhere else is refused, not followed.
      allowUrl: (target) => target.origin === url.origin,
      headers: { accept: 'application/json' },
    });
    if (res.status !== 200) return { unavailable: 'bad_status' };
    const facts = source.parse(JSON.parse(res.body), accountKey);
    return facts === null ? { unavailable: 'private' } : { facts };
  } catch (err) {
    if (err instanceof FetchRefusedError) {
      return {
        unavailable:
          err.reason === 'timeout' ? 'timeout' : err.reason === 'too_large' ? 'too_large' : 'error',
      };
    }
    // A malformed answer (not JSON, not the API's shape). Logged without the URL or the key.
    server.logger.warn(`${source.name}: the answer could not be read`, { reason: (err as Error).name });
    return { unavailable: 'malformed' };
  }
}
