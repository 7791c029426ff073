import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ServerErrorEvent } from '../events/types.js';
import type { AuthorizationServer } from '../server.js';
import type { LoginSession } from '../session/session.js';
import type { SessionUser } from '../session/state.js';
import { send, type Answer } from './answer.js';
import { setNoStore, setPageHeaders } from './headers.js';
import { presentError } from './present-error.js';
import type { RedirectTarget } from './redirect.js';
import { requestIdOf } from './request-id.js';

/** Where a request was answered, as `server.error` events name it. */
export type EndpointName = ServerErrorEvent['endpoint'];

/**
 * What one request carries from step to step: created by the pipeline, filled in by the steps,
 * gone with the request. Endpoints extend it with what their steps read and write.
 */
export interface Context {
  readonly server: AuthorizationServer;
  readonly req: Request;
  readonly res: Response;
  readonly endpoint: Endpoint<never>;
  /** The login session, once a step has loaded it. */
  session?: LoginSession;
  /**
   * The signed-in user, once `identifyUser` has run: the host's own signed-in account
   * (`authenticatedAccount`), else the user of the login session.
   */
  user?: SessionUser;
  /**
   * The client's verified redirect URI: set once the client and its redirect URI are verified,
   * it lets the error presenter send an error back to the client (RFC 6749 4.1.2.1).
   */
  redirectTarget?: RedirectTarget;
  /** What the request is answered with: set by the step that answers, usually the last. */
  answer?: Answer;
}

/**
 * One named step of an endpoint. It reads and writes the context, may throw an `OAuthError` (or
 * anything, reported as a 500), and returns a promise only when it waits for something.
 */
export type Step<C extends Context> = (ctx: C) => void | Promise<void>;

/** An endpoint: its route, how its errors are presented, and its ordered steps. */
export interface Endpoint<C extends Context> {
  name: EndpointName;
  method: 'GET' | 'POST';
  path: string;
  /**
   * `json`: no-store headers, RFC 6749 5.2 JSON errors. `page`: HTML pages with the page headers;
   * errors go back to the client when its redirect URI is verified, else to an error page.
   * `guard`: a middleware in front of the host's routes (`requireBearer`): JSON errors, and no
   * headers of its own on the host's answer.
   */
  kind: 'json' | 'page' | 'guard';
  /** The endpoint's own fields of the context, before the first step. */
  context?: (ctx: Context) => C;
  steps: readonly Step<C>[];
}

/** Declares an endpoint, typing its steps against its context. */
export function endpoint<C extends Context>(definition: Endpoint<C>): Endpoint<C> {
  return definition;
}

/**
 * The one pipeline every endpoint runs in: it creates the context, runs the steps in order, saves
 * a changed login session before anything is sent (a browser follows a redirect as soon as it
 * has the headers, possibly to another instance), then sends the answer. Whatever a step throws
 * goes to the one error presenter. `HEAD` on a page endpoint is 405: its `GET` has side effects.
 */
export function handle<C extends Context>(
  server: AuthorizationServer,
  endpoint: Endpoint<C>,
): RequestHandler {
  const { steps, kind } = endpoint;
  const extend = endpoint.context ?? ((ctx: Context) => ctx as C);
  return function pipeline(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'HEAD' && kind === 'page') {
      res.status(405).set('Allow', 'GET').end();
      return;
    }
    // A guard leaves the host's answer alone: the request id is chosen only if it fails.
    if (kind !== 'guard') requestIdOf(req, res);
    if (kind === 'page') setPageHeaders(res);
    else if (kind === 'json') setNoStore(res);
    const ctx = extend({ server, req, res, endpoint: endpoint as unknown as Endpoint<never> });
    let ran: void | Promise<void>;
    try {
      ran = runSteps(ctx, steps, 0);
    } catch (err) {
      return presentError(ctx, err);
    }
    if (ran === undefined) return finish(ctx, next);
    ran.then(
      () => finish(ctx, next),
      (err: unknown) => presentError(ctx, err),
    );
  };
}

/**
 * Runs `steps` from `from` on, synchronously until one of them returns a promise. A step that
 * sets the answer ends the table: the steps after it are for the requests it did not answer.
 */
function runSteps<C extends Context>(ctx: C, steps: readonly Step<C>[], from: number): void | Promise<void> {
  for (let i = from; i < steps.length && ctx.answer === undefined; i++) {
    const waiting = steps[i]!(ctx);
    if (waiting !== undefined) return waiting.then(() => runSteps(ctx, steps, i + 1));
  }
  return undefined;
}

function finish(ctx: Context, next: NextFunction): void {
  const { session } = ctx;
  if (session === undefined || !session.changed) return sendOrPass(ctx, next);
  session.save().then(
    () => sendOrPass(ctx, next),
    (err: unknown) => presentError(ctx, err),
  );
}

function sendOrPass(ctx: Context, next: NextFunction): void {
  const { answer } = ctx;
  if (answer === undefined) {
    return presentError(ctx, new Error(`endpoint ${ctx.endpoint.path} ended without an answer`));
  }
  if (answer.kind === 'next') return next();
  try {
    send(ctx.res, answer);
  } catch (err) {
    presentError(ctx, err);
  }
}
