import express, { type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../errors/oauth-error.js';

/**
 * RFC 6749 3.2, RFC 7009 2.1, RFC 7662 2.1: parameters travel as an
 * `application/x-www-form-urlencoded` body; JSON or other bodies, and parameters in the URL, are
 * refused outright.
 */
export function requireForm(req: Request, _res: Response, next: (err?: unknown) => void): void {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  if (req.originalUrl.includes('?')) {
    throw new OAuthError('invalid_request', 'Parameters belong in the body, not in the URL.');
  }
  next();
}

/** A bounded form parser: no nested objects, a few parameters, a small body. */
export function formParser(limit: string, parameterLimit: number): RequestHandler {
  return express.urlencoded({ extended: false, limit, parameterLimit });
}
