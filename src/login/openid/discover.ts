import { boundedFetch, FetchRefusedError, type BoundedResponse } from '../../net/bounded-fetch.js';
import { XRDS_MEDIA_TYPE } from './constants.js';
import { parseHtmlDiscovery } from './html-discovery.js';
import { parseHttpUrl } from './realm.js';
import { parseXrds, type OpenIdService } from './xrds.js';

/** Bounds of every discovery request. */
export interface DiscoveryLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Decides every URL fetched: the identifier, its redirects and its XRDS location. */
  allowUrl: (url: URL) => boolean;
}

/** The outcome of discovery on one URL identifier. */
export interface Discovery {
  /** The URL that answered, after redirects, without fragment: the Claimed Identifier (7.2). */
  claimedId: string;
  /** OpenID 2.0 services, best first (see {@link parseXrds}); empty if none. */
  services: OpenIdService[];
}

const MAX_REDIRECTS = 3;

/**
 * Performs OpenID 2.0 discovery on a URL identifier: Yadis first (the `application/xrds+xml`
 * answer itself, an `X-XRDS-Location` header or `<meta http-equiv>`), then HTML-based discovery
 * if the XRDS has no OpenID 2.0 service. XRIs are not supported. Every request is bounded.
 *
 * @throws {FetchRefusedError} when a request fails, is refused, or answers with a non-2xx status.
 * @see OpenID 2.0 section 7.3, Yadis 1.0 section 6
 */
export async function discover(identifier: URL, limits: DiscoveryLimits): Promise<Discovery> {
  const res = await get(
    identifier,
    `${XRDS_MEDIA_TYPE}, text/html;q=0.5, application/xhtml+xml;q=0.5`,
    limits,
  );
  const answered = new URL(res.url);
  answered.hash = '';
  const claimedId = answered.href;
  if (mediaType(res) === XRDS_MEDIA_TYPE) {
    return { claimedId, services: parseXrds(res.body) ?? [] };
  }
  const html = parseHtmlDiscovery(res.body);
  const location = res.headers.get('x-xrds-location') ?? html.xrdsLocation;
  if (location !== null) {
    const xrdsUrl = resolve(location, res.url);
    if (xrdsUrl !== null) {
      const xrds = await get(xrdsUrl, XRDS_MEDIA_TYPE, limits);
      const services = parseXrds(xrds.body) ?? [];
      if (services.length > 0) return { claimedId, services };
    }
  }
  const endpoint = html.provider === null ? null : resolve(html.provider, res.url);
  if (endpoint === null) return { claimedId, services: [] };
  // An absent local_id means the claimed identifier itself (section 7.3.3); a malformed one is dropped.
  const localId = html.localId === null ? null : resolve(html.localId, res.url);
  if (html.localId !== null && localId === null) return { claimedId, services: [] };
  return {
    claimedId,
    services: [{ kind: 'signon', endpoint: endpoint.href, localId: localId?.href ?? null }],
  };
}

async function get(url: URL, accept: string, limits: DiscoveryLimits): Promise<BoundedResponse> {
  const res = await boundedFetch(url, {
    headers: { accept },
    timeoutMs: limits.timeoutMs,
    maxBytes: limits.maxBytes,
    allowUrl: limits.allowUrl,
    maxRedirects: MAX_REDIRECTS,
  });
  if (res.status < 200 || res.status > 299) {
    throw new FetchRefusedError('bad_status', res.url, `discovery answered with status ${res.status}`);
  }
  return res;
}

function mediaType(res: BoundedResponse): string {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

function resolve(href: string, base: URL): URL | null {
  try {
    return parseHttpUrl(new URL(href, base).href);
  } catch {
    return null;
  }
}
