import type { Response } from 'express';

/**
 * How a request is answered, as the endpoint's last step decides it; the pipeline sends it once
 * the login session is saved.
 */
export type Answer =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'page'; status: number; html: string }
  /** A redirect with no body, as oauth2orize answers: no browser shows a "Redirecting to" body. */
  | { kind: 'redirect'; status: 302 | 303; location: string }
  | { kind: 'empty'; status: number }
  /** Hand the request on to the host's next handler (`requireBearer`). */
  | { kind: 'next' };

export const json = (body: unknown, status = 200): Answer => ({ kind: 'json', status, body });
export const page = (html: string, status = 200): Answer => ({ kind: 'page', status, html });
export const redirect = (location: string, status: 302 | 303 = 302): Answer => ({
  kind: 'redirect',
  status,
  location,
});

/** Sends an answer other than `next`. */
export function send(res: Response, answer: Exclude<Answer, { kind: 'next' }>): void {
  switch (answer.kind) {
    case 'json':
      return sendJson(res, answer.status, answer.body);
    case 'page':
      res.status(answer.status).type('html').send(answer.html);
      return;
    case 'redirect':
      // `location` percent-encodes the URL as `res.redirect` does.
      res.location(answer.location);
      res.statusCode = answer.status;
      res.end();
      return;
    case 'empty':
      res.statusCode = answer.status;
      res.end();
  }
}

/**
 * Answers `body` as JSON with `status`, as `res.json` would, minus what does not apply to an
 * answer that must not be cached (RFC 6749 5.1): `res.json` also hashes the body for an `ETag`
 * and checks the request's `If-None-Match` against it.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
