import express, { type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../errors/oauth-error.js';

/**
 * RFC 6749 3.2, RFC 7009 2.1, RFC 7662 2.1: parameters travel as an
 * `application/x-www-form-urlencoded` body; JSON or other bodies, and parameters in the URL, are
 * refused outright.
 */
export function requireForm(req: Request, _res: Response, next: (err?: unknown) => void): void {
  checkForm(req);
  next();
}

/** {@link requireForm}'s checks: throws what it would answer. */
export function checkForm(req: Request): void {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  if (req.originalUrl.includes('?')) {
    throw new OAuthError('invalid_request', 'Parameters belong in the body, not in the URL.');
  }
}

/** Runs a body parser such as {@link formParser}; resolves once `req.body` is set. */
export function parseBody(parser: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) =>
    parser(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
  );
}

/** A bounded form parser: no nested objects, a few parameters, a small body. */
export function formParser(limit: string, parameterLimit: number): RequestHandler {
  return express.urlencoded({ extended: false, limit, parameterLimit });
}
