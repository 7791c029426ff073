import type { ServerErrorEvent } from '../../events/types.js';
import type { AuthorizationServer } from '../../config/server.js';
import type { LoginSession } from '../../session/session.js';
import type { SessionUser } from '../../session/state.js';
import type { Request, Response } from 'express';
import type { Answer } from '../../http/answer.js';
import type { RedirectTarget } from '../../http/redirect.js';
import type { RequestTrace } from '../../observability/channels.js';

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
  /** The request's trace, when its tracing channel has a subscriber (src/endpoints/shared/trace.ts). */
  readonly trace?: Trace;
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

/** A request traced on its endpoint's channel: its context, and how it ends (`error`: refused). */
export interface Trace {
  readonly context: RequestTrace & { error?: unknown };
  end(error?: Error): void;
}
