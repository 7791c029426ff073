import type { Response } from 'express';

/**
 * Answers `body` as JSON with `status`, as `res.json` would, minus what does not apply to an
 * answer that must not be cached (RFC 6749 5.1): `res.json` also hashes the body for an `ETag`
 * and checks the request's `If-None-Match` against it, on the path of every token request.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}
