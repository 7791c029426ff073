/**
 * Outbound HTTP with hard bounds, for every request the server makes to a URL it did not choose
 * itself (OpenID discovery and direct verification). Node's `fetch` has no overall deadline, no
 * size cap and follows redirects anywhere; this wrapper adds all three.
 */

/**
 * Why a request was refused or abandoned; `address`: the host resolves to an address that is not
 * public ({@link pinnedFetch} only).
 */
export type FetchRefusalReason =
  'not_allowed' | 'address' | 'timeout' | 'too_large' | 'network' | 'bad_status';

/**
 * Thrown by {@link boundedFetch}. The message names only the origin of the URL, never its path or
 * query, which may carry secrets (assertion fields, nonces).
 */
export class FetchRefusedError extends Error {
  override readonly name = 'FetchRefusedError';
  readonly reason: FetchRefusalReason;

  constructor(reason: FetchRefusalReason, url: URL, detail: string, options?: { cause?: unknown }) {
    super(`Request to ${safeOrigin(url)} refused (${reason}): ${detail}`, options);
    this.reason = reason;
  }
}

/** Request and limits of one {@link boundedFetch} call. */
export interface BoundedFetchInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Deadline for the whole exchange, redirects and body included. */
  timeoutMs: number;
  /** Largest body accepted, in bytes after content decoding. */
  maxBytes: number;
  /** Decides every URL requested, the first one and each redirect target. */
  allowUrl: (url: URL) => boolean;
  /** Redirects followed at most; 0 (the default) makes a redirect an error. */
  maxRedirects?: number;
}

/** A response read in full, within the limits. */
export interface BoundedResponse {
  /** The URL that answered, after redirects. */
  url: URL;
  status: number;
  headers: Headers;
  body: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches `url` within a deadline and a size cap, following redirects only to allowed URLs.
 * Non-2xx statuses other than redirects are returned, not thrown: the caller decides.
 *
 * @example
 * const res = await boundedFetch(new URL('https://op.example/'), {
 *   timeoutMs: 5000, maxBytes: 262144, allowUrl: (u) => u.origin === 'https://op.example',
 * });
 *
 * @throws {FetchRefusedError} `not_allowed` (scheme, credentials or `allowUrl`), `timeout`,
 * `too_large`, `network`, or `bad_status` (a redirect without a usable `Location`, or too many).
 */
export async function boundedFetch(url: URL, init: BoundedFetchInit): Promise<BoundedResponse> {
  const controller = new AbortController();
  // One timer for the whole exchange: a server that trickles its body must not reset it.
  const timer = setTimeout(() => controller.abort(), init.timeoutMs);
  try {
    return await fetchFollowingRedirects(url, init, controller);
  } catch (err) {
    if (err instanceof FetchRefusedError) throw err;
    if (controller.signal.aborted) {
      throw new FetchRefusedError('timeout', url, `no complete answer within ${init.timeoutMs} ms`);
    }
    throw new FetchRefusedError('network', url, 'the server could not be reached', { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

async function fetchFollowingRedirects(
  first: URL,
  init: BoundedFetchInit,
  controller: AbortController,
): Promise<BoundedResponse> {
  let url = first;
  let method = init.method ?? 'GET';
  let body = init.body;
  const maxRedirects = init.maxRedirects ?? 0;
  for (let redirects = 0; ; redirects += 1) {
    assertAllowed(url, init);
    const res = await fetch(url, {
      method,
      headers: init.headers,
      body,
      redirect: 'manual',
      signal: controller.signal,
    });
    if (!REDIRECT_STATUSES.has(res.status)) {
      const text = await readCapped(res, url, init.maxBytes, controller);
      return { url, status: res.status, headers: res.headers, body: text };
    }
    await res.body?.cancel().catch(() => undefined);
    if (redirects >= maxRedirects) {
      throw new FetchRefusedError('bad_status', url, 'too many redirects');
    }
    url = redirectTarget(res, url);
    // RFC 9110 15.4: 303 always, and 301/302 in practice, turn a POST into a GET without a body.
    if (res.status === 303 || (method === 'POST' && (res.status === 301 || res.status === 302))) {
      method = 'GET';
      body = undefined;
    }
  }
}

function redirectTarget(res: Response, from: URL): URL {
  const location = res.headers.get('location');
  if (location === null || location === '') {
    throw new FetchRefusedError('bad_status', from, 'redirect without a Location header');
  }
  try {
    return new URL(location, from);
  } catch {
    throw new FetchRefusedError('bad_status', from, 'redirect to a malformed URL');
  }
}

function assertAllowed(url: URL, init: BoundedFetchInit): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchRefusedError('not_allowed', url, 'only http and https URLs are fetched');
  }
  if (url.username !== '' || url.password !== '') {
    throw new FetchRefusedError('not_allowed', url, 'URLs with credentials are not fetched');
  }
  if (!init.allowUrl(url)) {
    throw new FetchRefusedError('not_allowed', url, 'the URL is not on the allow-list');
  }
}

async function readCapped(
  res: Response,
  url: URL,
  maxBytes: number,
  controller: AbortController,
): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    controller.abort();
    throw new FetchRefusedError('too_large', url, `the body exceeds ${maxBytes} bytes`);
  }
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder('utf-8');
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      // Aborting the request closes the connection, so an endless body stops being read.
      controller.abort();
      throw new FetchRefusedError('too_large', url, `the body exceeds ${maxBytes} bytes`);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

function safeOrigin(url: URL): string {
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `a ${url.protocol} URL`;
}
