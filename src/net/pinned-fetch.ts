import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import * as tls from 'node:tls';
import { FetchRefusedError } from './bounded-fetch.js';
import { isLoopbackAddress, isPublicAddress } from './public-address.js';

/** Request and limits of one {@link pinnedFetch} call. */
export interface PinnedFetchInit {
  /** Deadline for the whole exchange, from the name's lookup to the body's last byte. */
  timeoutMs: number;
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Whether the host may resolve to a loopback address (local development, tests); never a private one. */
  allowLoopback: boolean;
  /**
   * Certificates (PEM) trusted besides Node's default ones (its roots and `NODE_EXTRA_CA_CERTS`):
   * a development CA.
   */
  ca?: readonly string[];
  headers?: Record<string, string>;
}

/** A response read in full, within the limits. Redirects are answers like any other: never followed. */
export interface PinnedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * GETs an https URL chosen by someone else (a client's metadata document) without letting it
 * reach the server's own network: the name is resolved once, every address it resolves to is
 * checked ({@link isPublicAddress}), and the connection goes to a checked address, so a second
 * answer of the DNS (rebinding) changes nothing. No redirect is followed, one deadline covers the
 * whole exchange (a body that trickles does not reset it), and the body is capped.
 *
 * Built on `https.request`, whose `lookup` option is the documented hook into the connection's
 * name resolution; Node's `fetch` would need undici's `Agent` (a dependency of its own, whose
 * version must match the undici inside Node) for the same.
 *
 * @example
 * const res = await pinnedFetch(new URL('https://app.example/client.json'), {
 *   timeoutMs: 4000, maxBytes: 65536, allowLoopback: false,
 * });
 *
 * @throws {FetchRefusedError} `not_allowed` (not https, credentials), `address`, `timeout`,
 * `too_large`, `network`, or `bad_status` (a compressed body: only identity is asked for).
 */
export async function pinnedFetch(url: URL, init: PinnedFetchInit): Promise<PinnedResponse> {
  // `ca` replaces Node's default trust, NODE_EXTRA_CA_CERTS included: given, it is added to it.
  const ca =
    init.ca === undefined || init.ca.length === 0
      ? undefined
      : [...(await defaultCertificates()), ...init.ca];
  return fetchPinned(url, init, ca);
}

function fetchPinned(url: URL, init: PinnedFetchInit, ca: string[] | undefined): Promise<PinnedResponse> {
  if (url.protocol !== 'https:') {
    return Promise.reject(new FetchRefusedError('not_allowed', url, 'only https URLs are fetched'));
  }
  if (url.username !== '' || url.password !== '') {
    return Promise.reject(new FetchRefusedError('not_allowed', url, 'URLs with credentials are not fetched'));
  }
  const acceptable = (address: string) =>
    isPublicAddress(address) || (init.allowLoopback && isLoopbackAddress(address));
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // An IP literal is not looked up (net.connect skips `lookup`): it is checked here instead.
  if (isIP(literal) !== 0 && !acceptable(literal)) {
    return Promise.reject(refusedAddress(url));
  }
  return new Promise<PinnedResponse>((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new FetchRefusedError('timeout', url, `no complete answer within ${init.timeoutMs} ms`)),
      init.timeoutMs,
    );
    const req = request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'accept-encoding': 'identity', ...init.headers },
      lookup: checkedLookup(url, acceptable),
      // A fresh connection each time: a pooled one would skip the lookup and its check.
      agent: false,
      ...(ca === undefined ? {} : { ca }),
    });
    req.on('error', (err) =>
      fail(
        err instanceof FetchRefusedError
          ? err
          : new FetchRefusedError('network', url, 'the server could not be reached', { cause: err }),
      ),
    );
    req.on('response', (res) => {
      const encoding = res.headers['content-encoding'];
      if (encoding !== undefined && encoding !== 'identity') {
        fail(new FetchRefusedError('bad_status', url, `a ${encoding} body was not asked for`));
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > init.maxBytes) {
        fail(new FetchRefusedError('too_large', url, `the body exceeds ${init.maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.byteLength;
        // Destroying the request closes the connection: an endless body stops being read.
        if (received > init.maxBytes) {
          fail(new FetchRefusedError('too_large', url, `the body exceeds ${init.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) =>
        fail(new FetchRefusedError('network', url, 'the answer broke off', { cause: err })),
      );
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.end();
  });
}

function refusedAddress(url: URL): FetchRefusedError {
  return new FetchRefusedError('address', url, 'the host is not at a public address');
}

/**
 * The connection's name resolution: every address the name resolves to must be acceptable (one
 * that is not refuses the request, so a name cannot mix a public and an internal address), and
 * the connection is made to these very addresses.
 */
function checkedLookup(url: URL, acceptable: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0 || !addresses.every(({ address }) => acceptable(address))) {
        return callback(refusedAddress(url), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * The certificates Node trusts by default: its roots and the file named by `NODE_EXTRA_CA_CERTS`
 * (`tls.getCACertificates('default')` from Node 22.15; before it, the same read here, as Node
 * reads it at start). A file that cannot be read adds nothing, as at Node's start.
 */
async function defaultCertificates(): Promise<string[]> {
  const { getCACertificates } = tls as { getCACertificates?: (type: 'default') => string[] };
  if (getCACertificates !== undefined) return getCACertificates('default');
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra === undefined || extra === '') return [...tls.rootCertificates];
  const pem = await readFile(extra, 'utf8').catch(() => undefined);
  return pem === undefined ? [...tls.rootCertificates] : [...tls.rootCertificates, pem];
}
