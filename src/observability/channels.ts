import {
  tracingChannel,
  type TracingChannel,
  type TracingChannelSubscribers,
} from 'node:diagnostics_channel';

/*
 * Tracing without a dependency: Node's `diagnostics_channel` tracing channels, one per endpoint
 * and one per outbound call, named `openid-oauth-bridge:<name>`. A subscriber sees `start`, `end`,
 * `asyncStart`, `asyncEnd` and `error` for each request or call, with a context object whose
 * fields are bounded: names the library chooses, an error code, a kind, a provider's configured
 * name. Never a token, code, secret, cookie or a raw client id. With no subscriber, a request
 * pays for one `hasSubscribers` check.
 */

/** What each endpoint's channel is named for. */
export type EndpointTraceName =
  | 'authorize'
  | 'token'
  | 'introspect'
  | 'revoke'
  | 'bearer'
  | 'device'
  | 'userinfo'
  | 'register'
  | 'login'
  | 'logout'
  | 'applications'
  | 'developers'
  | 'jwks';

/** What each outbound call's channel is named for. */
export type OutboundTraceName =
  'openid_discovery' | 'openid_verification' | 'client_document_fetch' | 'steam_web_api';

/** The context a request's channel publishes: filled in as the request goes, final at `asyncEnd`. */
export interface RequestTrace {
  /** The endpoint, by the name `server.error` events give it (`token`, `authorization`, `consent`, …). */
  endpoint: string;
  /** The request's HTTP method (`GET`, `POST`, …). */
  method?: string;
  /**
   * The route the request matched: where the host mounted the router, then the endpoint's own
   * path (`/oauth/token`); a template, never the request's URL or query. Absent for `bearer`,
   * which guards the host's own routes.
   */
  route?: string;
  /**
   * The grant: at the token endpoint, its `grant_type` when it is one this server knows (others:
   * `other`); at an authorization that handed the client a code or a token, `authorization_code`
   * or `implicit`.
   */
  grantType?: string;
  /**
   * How the request ended: answered or passed on to the host's route (`requireBearer`), or refused
   * (an error, or any answer with a 4xx or 5xx status).
   */
  outcome?: 'success' | 'error';
  /** The OAuth error code it was refused with (`invalid_grant`, `server_error`, …). */
  errorCode?: string;
  /** The HTTP status answered; absent when `requireBearer` passed the request on. */
  status?: number;
  /** The client's kind, once the request knows its client. */
  clientKind?: ClientKind;
  /** The configured provider a login is at, by its name. */
  provider?: string;
}

/** The kinds a client is counted by: bounded, whatever the number of clients. */
export type ClientKind = 'confidential' | 'public' | 'document' | 'dynamic' | 'member';

/** The context an outbound call's channel publishes. */
export interface OutboundTrace {
  call: OutboundTraceName;
  /** The configured provider the call is for, by its name, when there is one. */
  provider?: string;
  outcome?: 'success' | 'error';
  /**
   * Why it failed, in a word: `timeout` (past its deadline), `network` (not reached), `refused`
   * (a URL or address this server does not call), `status` (an HTTP status it cannot use),
   * `too_large`, `invalid` (an answer it cannot use), else `failed`.
   */
  reason?: string;
}

/**
 * Whose request a trace is: the server's `events`, under a registered symbol on the request's
 * context, so that the figures of one server count its own requests. A symbol, not a field: it
 * is not one of the context's bounded fields, and `JSON.stringify` and `Object.entries` skip it.
 *
 * @internal
 */
export const TRACE_OWNER: unique symbol = Symbol.for('openid-oauth-bridge.trace.owner');

const PREFIX = 'openid-oauth-bridge:';

const channels = new Map<string, TracingChannel<object, object>>();

/** The tracing channel `openid-oauth-bridge:<name>`: the one a subscriber subscribes to. */
export function traceChannel(name: EndpointTraceName | OutboundTraceName): TracingChannel<object, object> {
  let channel = channels.get(name);
  if (channel === undefined) {
    channel = tracingChannel(`${PREFIX}${name}`);
    channels.set(name, channel);
  }
  return channel;
}

/**
 * Subscribes `handlers` to the events of `channel` they name, and only those: an event nobody
 * reads is then published to no one, which costs a request nothing. Returns the unsubscriber.
 */
export function subscribeTo(
  channel: TracingChannel<object, object>,
  handlers: Partial<TracingChannelSubscribers<object>>,
): () => void {
  const events = (Object.keys(handlers) as (keyof TracingChannelSubscribers<object>)[]).filter(
    (event) => handlers[event] !== undefined,
  );
  for (const event of events) channel[event].subscribe(handlers[event]! as (message: unknown) => void);
  return () => {
    for (const event of events) channel[event].unsubscribe(handlers[event]! as (message: unknown) => void);
  };
}

/** Every channel's name, for a subscriber that wants them all (metrics, OpenTelemetry). */
export const TRACE_NAMES: readonly (EndpointTraceName | OutboundTraceName)[] = [
  'authorize',
  'token',
  'introspect',
  'revoke',
  'bearer',
  'device',
  'userinfo',
  'register',
  'login',
  'logout',
  'applications',
  'developers',
  'jwks',
  'openid_discovery',
  'openid_verification',
  'client_document_fetch',
  'steam_web_api',
];

/**
 * {@link traceRequest} for work that is a promise (an outbound call): ends the trace when it
 * settles. The `error` subscribers see `safeError(err)` in `context.error`, never what was thrown:
 * an error of a call or of a storage may carry a URL with a token, a SQL statement, a cookie. What
 * `run` resolves or rejects with reaches the caller as is.
 */
export function traced<C extends { error?: unknown; outcome?: string }, T>(
  channel: TracingChannel<object, object>,
  context: C,
  run: () => Promise<T>,
  safeError: (err: unknown) => Error,
): Promise<T> {
  let settled!: Promise<T>;
  traceRequest(channel, context, (trace) => {
    let promise: Promise<T>;
    try {
      promise = run();
    } catch (err) {
      trace.end(safeError(err));
      throw err;
    }
    settled = promise.then(
      (result) => {
        trace.end();
        return result;
      },
      (err: unknown) => {
        trace.end(safeError(err));
        throw err;
      },
    );
  });
  return settled;
}

/**
 * A request running inside its endpoint's channel ({@link traceRequest}): what it publishes when it
 * ends. The pipeline ends it once, with the error it was refused with, or none.
 */
export class TracedRequest<
  C extends { error?: unknown; outcome?: string } = RequestTrace & { error?: unknown },
> {
  #running = true;
  #ended = false;
  #error: Error | undefined;

  constructor(
    readonly channel: TracingChannel<object, object>,
    readonly context: C,
  ) {}

  /**
   * Ends the trace: `error` (when refused), then `asyncStart` and `asyncEnd`. Called while the
   * request's synchronous part still runs, it waits for `end`, as a promise's settling would.
   */
  end(error?: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    if (!this.#running) this.#publishEnd();
  }

  /**
   * @internal The synchronous part threw: the request ends here, refused (`outcome` `error`)
   * unless it had already ended, as a promise whose executor throws is rejected. The subscribers
   * see an error that says only that, never what was thrown.
   */
  threw(): void {
    if (!this.#ended) {
      (this.context as { outcome?: string }).outcome ??= 'error';
      this.end(new Error('the request threw'));
    }
    this.returned();
  }

  /** @internal The synchronous part returned: `end`, then what `end()` was waiting for. */
  returned(): void {
    this.#running = false;
    this.channel.end.publish(this.context);
    if (this.#ended) this.#publishEnd();
  }

  #publishEnd(): void {
    const { channel, context } = this;
    if (this.#error !== undefined) {
      context.error = this.#error;
      channel.error.publish(context);
    }
    channel.asyncStart.publish(context);
    channel.asyncEnd.publish(context);
  }
}

/**
 * Runs a request inside `channel`, as `tracePromise` would run it but with no promise: `start`
 * with the stores bound, then `run(trace)`, then `end`; `trace.end()` publishes `asyncStart` and
 * `asyncEnd` (after `error`, when refused) whenever the request ends. A request is answered
 * through callbacks, and a promise made only to be traced would cost every request a few.
 *
 * Every event is published inside the stores bound to `start`, as a traced promise's are (`end`
 * in `runStores`, the rest in reactions made there): an APM tool reads its context in them. What
 * `run` throws ends the trace as a refusal (`end`, `error`, `asyncStart`, `asyncEnd`: every
 * traced request ends at `asyncEnd`, which is all the figures read), then reaches the caller.
 */
export function traceRequest<C extends { error?: unknown; outcome?: string }>(
  channel: TracingChannel<object, object>,
  context: C,
  run: (trace: TracedRequest<C>) => void,
): void {
  channel.start.runStores(context, runTraced<C>, undefined, run, new TracedRequest(channel, context));
}

/** {@link traceRequest}'s body, inside the stores: no closure made per request. */
function runTraced<C extends { error?: unknown; outcome?: string }>(
  run: (trace: TracedRequest<C>) => void,
  trace: TracedRequest<C>,
): void {
  try {
    run(trace);
  } catch (err) {
    trace.threw();
    throw err;
  }
  trace.returned();
}

/**
 * Runs an outbound call inside its channel: `asyncEnd` with `outcome`, or `error` with an error that
 * says only `trace.reason`. `failed` tells a call that resolved but did not do its job (a status
 * the caller refuses, a document without what it needs) by returning its reason: the channel sees
 * an error, the caller still gets the result. With no subscriber, just runs it.
 */
export function traceOutbound<T>(
  trace: OutboundTrace,
  call: () => Promise<T>,
  failed?: (result: T) => string | undefined,
): Promise<T> {
  const channel = traceChannel(trace.call);
  if (!channel.hasSubscribers) return call();
  const context: OutboundTrace & { error?: unknown } = trace;
  let resolved: { result: T } | undefined;
  return traced(
    channel,
    context,
    () =>
      call().then(
        (result) => {
          const reason = failed?.(result);
          if (reason === undefined) {
            trace.outcome = 'success';
            return result;
          }
          trace.outcome = 'error';
          trace.reason = reason;
          resolved = { result };
          throw new Error(reason);
        },
        (err: unknown) => {
          trace.outcome = 'error';
          trace.reason ??= reasonOf(err);
          throw err;
        },
      ),
    () => new Error(`${trace.call} failed: ${trace.reason ?? 'failed'}`),
  ).catch((err: unknown) => {
    if (resolved !== undefined) return resolved.result;
    throw err;
  });
}

/**
 * The word an outbound call's failure is traced by, from the errors of the layers below (read by
 * their fields, not imported): the innermost that says why, along `cause`. Never a message.
 */
const REASONS: Readonly<Record<string, string>> = {
  // FetchRefusedError.reason (src/net)
  timeout: 'timeout',
  network: 'network',
  not_allowed: 'refused',
  address: 'refused',
  too_large: 'too_large',
  bad_status: 'status',
  // OpenIdLoginError.kind (src/login/openid)
  invalid_response: 'invalid',
  provider_unreachable: 'network',
  // Node's (any other `E…` code: `network`)
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  TimeoutError: 'timeout',
};

/** A word for why an outbound call failed: bounded, never its message. */
function reasonOf(err: unknown): string {
  let found = 'failed';
  let at: unknown = err;
  for (let depth = 0; depth < 4 && typeof at === 'object' && at !== null; depth++) {
    const { reason, kind, code, name } = at as Record<string, unknown>;
    const word = [reason, kind, code, name]
      .map((field) =>
        typeof field === 'string' && Object.hasOwn(REASONS, field) ? REASONS[field] : undefined,
      )
      .find((w) => w !== undefined);
    if (word !== undefined) found = word;
    else if (found === 'failed' && typeof code === 'string' && /^E[A-Z]+$/.test(code)) found = 'network';
    at = (at as { cause?: unknown }).cause;
  }
  return found;
}
