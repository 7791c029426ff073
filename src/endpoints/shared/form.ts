import express, { type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { formParams } from '../../http/params.js';
import type { Context, Step } from './pipeline.js';

/** A context whose form parameters have been read. */
export interface FormContext extends Context {
  /** The form's parameters, strictly parsed: each at most once. */
  params: Map<string, string>;
}

/**
 * Step of the endpoints that take a client's form (token, revocation, introspection): only an
 * `application/x-www-form-urlencoded` body (RFC 6749 3.2, RFC 7009 2.1, RFC 7662 2.1), bounded,
 * read strictly; JSON or other bodies, and parameters in the URL, are refused outright.
 */
export function readClientForm(limit: string, parameterLimit: number): Step<FormContext> {
  const parser = formParser(limit, parameterLimit);
  return function readForm(ctx) {
    const { req, res } = ctx;
    if (!req.is('application/x-www-form-urlencoded')) {
      throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
    }
    if (req.originalUrl.includes('?')) {
      throw new OAuthError('invalid_request', 'Parameters belong in the body, not in the URL.');
    }
    return parse(parser, req, res).then(() => {
      // RFC 8707 allows resource more than once; this server issues a token for one resource at a
      // time, and says so as the authorization endpoint does.
      if (ctx.server.resources.all.length && Array.isArray((req.body as { resource?: unknown }).resource)) {
        throw new OAuthError(
          'invalid_target',
          'This server issues a token for one resource at a time: give resource once.',
        );
      }
      ctx.params = formParams(req.body);
    });
  };
}

/** Step of the endpoints that take a form of the library's own pages (consent, sign-out, revoke). */
export function readPageForm(limit: string, parameterLimit: number): Step<FormContext> {
  const parser = formParser(limit, parameterLimit);
  return function readForm(ctx) {
    return parse(parser, ctx.req, ctx.res).then(() => {
      ctx.params = formParams(ctx.req.body);
    });
  };
}

/** A bounded form parser: no nested objects, a few parameters, a small body. */
function formParser(limit: string, parameterLimit: number): RequestHandler {
  return express.urlencoded({ extended: false, limit, parameterLimit });
}

/** Runs a body parser, which ends by calling `next()` or `next(error)`. */
export function parse(parser: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void parser(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
  });
}
