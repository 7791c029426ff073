import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { OAuthError, toOAuthError } from '../../errors/oauth-error.js';
import { TRACE_OWNER, traceChannel, traceRequest, type RequestTrace } from '../../observability/channels.js';
import { describeRequest, traceNameOf } from './trace.js';
import type { Trace } from './context.js';
import { send } from '../../http/answer.js';
import type { Context, Endpoint, Step } from './context.js';
import { setNoStore, setPageHeaders } from '../../http/headers.js';
import { presentError as presentErrorOf } from './present-error.js';
import { requestIdOf } from '../../http/request-id.js';

export { endpoint, type Context, type Endpoint, type EndpointName, type Step } from './context.js';

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
  const channel = traceChannel(traceNameOf(endpoint.name));
  const run = (req: Request, res: Response, next: NextFunction, trace?: Trace): void =>
    pipeline(req, res, next, trace);
  // With a subscriber on the endpoint's tracing channel, the request runs inside it.
  return function traceable(req: Request, res: Response, next: NextFunction): void {
    if (!channel.hasSubscribers) return run(req, res, next);
    const context: RequestTrace & { error?: unknown; [TRACE_OWNER]: unknown } = {
      endpoint: endpoint.name,
      method: req.method,
      [TRACE_OWNER]: server.events,
    };
    // The endpoint's path under the host's mount point; a guard's route is the host's.
    if (kind !== 'guard') context.route = req.baseUrl + endpoint.path;
    traceRequest(channel, context, (trace) => run(req, res, next, trace));
  };
  function pipeline(req: Request, res: Response, next: NextFunction, trace?: Trace): void {
    if (req.method === 'HEAD' && kind === 'page') {
      res.status(405).set('Allow', 'GET').end();
      // Refused like any other request: its trace ends, its duration is counted.
      if (trace !== undefined) {
        Object.assign(trace.context, { status: 405, outcome: 'error', errorCode: 'invalid_request' });
        trace.end(new Error(`${endpoint.name} refused: invalid_request`));
      }
      return;
    }
    // A guard leaves the host's answer alone: the request id is chosen only if it fails.
    if (kind !== 'guard') requestIdOf(req, res);
    if (kind === 'page') setPageHeaders(res);
    else if (kind === 'json') setNoStore(res);
    // `trace` is there, undefined, on an untraced request too: every context has one shape, and
    // the steps' property reads stay monomorphic when a subscriber comes or goes.
    const ctx = extend({ server, req, res, endpoint: endpoint as unknown as Endpoint<never>, trace });
    let ran: void | Promise<void>;
    try {
      // A JSON endpoint takes every method, and answers the others with its own error.
      if (kind === 'json' && req.method !== endpoint.method) throw wrongMethod(endpoint.method);
      ran = runSteps(ctx, steps, 0);
    } catch (err) {
      return presentError(ctx, err);
    }
    if (ran === undefined) return finish(ctx, next);
    ran.then(
      () => finish(ctx, next),
      (err: unknown) => presentError(ctx, err),
    );
  }
}

function wrongMethod(method: Endpoint<never>['method']): OAuthError {
  return new OAuthError('invalid_request', `This endpoint accepts ${method} only.`, {
    headers: { Allow: method },
  });
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
  if (answer.kind === 'next') {
    settle(ctx);
    return next();
  }
  try {
    send(ctx.res, answer);
  } catch (err) {
    return presentError(ctx, err);
  }
  settle(ctx);
}

/**
 * Ends a traced request's trace (a subscriber on its channel): what it was, as far as the request
 * knows it, in bounded words. `error`: the code it was refused with.
 */
function settle(ctx: Context, error?: string): void {
  const { trace } = ctx;
  if (trace === undefined) return;
  const { context } = trace;
  describeRequest(ctx, context);
  if (!ctx.res.headersSent && ctx.answer?.kind === 'next') {
    context.outcome = 'success';
  } else {
    context.status = ctx.res.statusCode;
    // Refused: an error thrown, or an answer of an error status a step chose itself (a page
    // rendered with 429, requireBearer's bare 401 challenge).
    context.outcome = error === undefined && context.status < 400 ? 'success' : 'error';
  }
  if (error === undefined) return trace.end();
  context.errorCode = error;
  trace.end(new Error(`${ctx.endpoint.name} refused: ${error}`));
}

/**
 * The error presenter, guarded: what it throws itself (a host's error page renderer or logger
 * that fails) must not become an unhandled rejection. The request is then answered with a bare
 * 500, or cut if its answer had begun or the bare 500 fails too. Its trace ends either way.
 */
function presentError(ctx: Context, err: unknown): void {
  try {
    presentErrorOf(ctx, err);
    if (ctx.trace !== undefined) settle(ctx, toOAuthError(err).code);
  } catch {
    answerBare(ctx.res);
  }
  if (ctx.trace !== undefined && ctx.trace.context.outcome === undefined) {
    settle(ctx, 'server_error');
  }
}

/** A bare 500 when nothing was sent yet; otherwise, or when even that throws, the request is cut. */
function answerBare(res: Response): void {
  if (!res.headersSent) {
    try {
      res.statusCode = 500;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Internal Server Error');
      return;
    } catch {
      // A host's wrapper of writeHead or end that throws: nothing more can be said.
    }
  }
  res.destroy();
}
