import express, { type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../errors/oauth-error.js';
import { setNoStore } from './headers.js';
import { requestIdOf } from './request-id.js';
import { runStep } from './run-step.js';

/**
 * The start of every endpoint that takes a form (token, revocation, introspection): the request's
 * id, no-store headers (RFC 6749 5.1), then only an `application/x-www-form-urlencoded` body
 * (RFC 6749 3.2, RFC 7009 2.1, RFC 7662 2.1), read by `parser` into `req.body`. JSON or other
 * bodies, and parameters in the URL, are refused outright.
 */
export async function readFormRequest(parser: RequestHandler, req: Request, res: Response): Promise<void> {
  requestIdOf(req, res);
  setNoStore(res);
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  if (req.originalUrl.includes('?')) {
    throw new OAuthError('invalid_request', 'Parameters belong in the body, not in the URL.');
  }
  await runStep(parser, req, res);
}

/** A bounded form parser: no nested objects, a few parameters, a small body. */
export function formParser(limit: string, parameterLimit: number): RequestHandler {
  return express.urlencoded({ extended: false, limit, parameterLimit });
}
