import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** `Location`, resolved against the request URL, or null. */
  location: string | null;
  body: string;
}

/**
 * One plain-http request through node:http, never following redirects. Tests use it for the steps
 * a browser or a test harness takes, so that `globalThis.fetch`, which the library uses for every
 * outbound request, sees only the server's own requests.
 */
export function rawRequest(
  url: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...init.headers };
    // A length, not chunked encoding: python's http.server reads only Content-Length bodies.
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const req = request(url, { method: init.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const location = res.headers.location;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          location: location === undefined ? null : new URL(location, url).href,
          body,
        });
      });
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer from ${url} in 10 s`)));
    req.on('error', reject);
    req.end(init.body);
  });
}
