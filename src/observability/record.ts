import type { ServerEvents } from '../events/emitter.js';
import {
  TRACE_NAMES,
  TRACE_OWNER,
  subscribeTo,
  traceChannel,
  type OutboundTrace,
  type OutboundTraceName,
  type RequestTrace,
} from './channels.js';
import type { FigureSink } from './figures.js';
import { LabelSets } from './labels.js';
import { FIGURES } from './series.js';

/*
 * The figures of one server, fed from what it already reports: its tracing channels (every
 * request: how it ended, how long it took, what it issued) and its typed events (what happens
 * rarely: a login, a replay, a refusal). Nothing is added to a request's path but the listeners
 * themselves, each of which finds a label set made once and hands it to the sink. What every
 * request of a busy path does (issuing a code or a token) is read from its trace, never from an
 * event: listening to one makes each request build it (its address, its request id).
 */

/** What {@link recordFigures} reads of a server: its events, and its providers' names. */
export interface FigureSource {
  readonly events: ServerEvents;
  readonly options: { readonly providers: readonly { readonly name: string }[] };
}

/** When a request or call started, on its trace's context (a symbol: no subscriber sees it). */
const STARTED: unique symbol = Symbol('openid-oauth-bridge.figures.started');

type Timed = { [STARTED]?: number; [TRACE_OWNER]?: unknown };

const OUTBOUND: ReadonlySet<OutboundTraceName> = new Set<OutboundTraceName>([
  'openid_discovery',
  'openid_verification',
  'client_document_fetch',
  'steam_web_api',
]);

/**
 * Feeds the server's figures ({@link FIGURES}) to `sink`, from now until the returned function is
 * called. Requests are counted for this server alone (another server in the process has its own
 * figures); calls to other servers (`oauth_outbound_calls_total`) for the whole process, since
 * they are made below the server. Labels are bounded words: a provider not configured (a host's
 * login strategy may name any) is `other`.
 *
 * @example
 * // The Prometheus router calls it for you; for OpenTelemetry's meter:
 * const otel = await openTelemetry();
 * const stop = recordFigures(server, otel.figures);
 * // on shutdown: stop(); otel.stop();
 */
export function recordFigures(server: FigureSource, sink: FigureSink): () => void {
  const undo = [...countEvents(server, sink), ...timeRequests(server, sink)];
  return () => {
    for (const step of undo.splice(0)) step();
  };
}

/** The figures that count events. Returns the unsubscribers. */
function countEvents(server: FigureSource, sink: FigureSink): (() => void)[] {
  const { events } = server;
  const providers = new Set(server.options.providers.map((p) => p.name));
  const providerOf = (name: string | undefined) =>
    name === undefined ? 'unknown' : providers.has(name) ? name : 'other';
  const authorizations = new LabelSets(FIGURES.authorizations);
  const logins = new LabelSets(FIGURES.logins);
  const failures = new LabelSets(FIGURES.clientAuthenticationFailures);
  const replays = new LabelSets(FIGURES.replays);
  const limited = new LabelSets(FIGURES.rateLimited);
  const outages = new LabelSets(FIGURES.storageUnavailable);
  const authorized = (outcome: string) => () =>
    sink.count(FIGURES.authorizations, authorizations.of(outcome));
  return [
    events.on('consent.denied', authorized('denied')),
    events.on('device.authorized', authorized('device_authorized')),
    events.on('device.denied', authorized('device_denied')),
    events.on('team.refused', (e) => {
      if (e.flow !== 'refresh') sink.count(FIGURES.authorizations, authorizations.of('team_refused'));
    }),
    events.on('login.succeeded', (e) =>
      sink.count(FIGURES.logins, logins.of(providerOf(e.provider), 'success')),
    ),
    events.on('login.failed', (e) =>
      sink.count(FIGURES.logins, logins.of(providerOf(e.provider), e.outcome)),
    ),
    events.on('client.authentication_failed', (e) =>
      sink.count(FIGURES.clientAuthenticationFailures, failures.of(e.endpoint, e.clientKind)),
    ),
    events.on('refresh_token.reused', () => sink.count(FIGURES.replays, replays.of('refresh_token'))),
    events.on('code.replayed', () => sink.count(FIGURES.replays, replays.of('authorization_code'))),
    events.on('rate_limit.exceeded', (e) => sink.count(FIGURES.rateLimited, limited.of(e.limit, e.per))),
    events.on('server.error', (e) => {
      if (e.status === 503) sink.count(FIGURES.storageUnavailable, outages.of(e.endpoint));
    }),
  ];
}

/**
 * The figures read from the tracing channels: each request's duration and outcome (this server's
 * only, by its trace's owner), the token and registration requests, the authorizations that
 * issued a code or a token (as `code.issued` and the implicit `token.issued` report them), and
 * the outbound calls. Returns the unsubscribers.
 */
function timeRequests(server: FigureSource, sink: FigureSink): (() => void)[] {
  const owner = server.events;
  const durations = new LabelSets(FIGURES.requestDuration);
  const tokens = new LabelSets(FIGURES.tokenRequests);
  const registrations = new LabelSets(FIGURES.registrations);
  const authorizations = new LabelSets(FIGURES.authorizations);
  const codeIssued = authorizations.of('code_issued');
  const tokenIssued = authorizations.of('token_issued');
  const start = (context: object) => {
    if ((context as Timed)[TRACE_OWNER] === owner) (context as Timed)[STARTED] = performance.now();
  };
  const ended = (context: object) => {
    const started = (context as Timed)[STARTED];
    if (started === undefined || (context as Timed)[TRACE_OWNER] !== owner) return;
    const trace = context as RequestTrace;
    const outcome = trace.outcome ?? 'error';
    const seconds = (performance.now() - started) / 1000;
    sink.observe(FIGURES.requestDuration, durations.of(trace.endpoint, outcome), seconds);
    if (trace.endpoint === 'token') {
      const labels = tokens.of(trace.grantType ?? 'none', outcome, trace.errorCode);
      sink.count(FIGURES.tokenRequests, labels);
    } else if (trace.endpoint === 'registration') {
      sink.count(FIGURES.registrations, registrations.of(outcome, trace.errorCode));
    } else if (trace.grantType === 'authorization_code') {
      sink.count(FIGURES.authorizations, codeIssued);
    } else if (trace.grantType === 'implicit') {
      sink.count(FIGURES.authorizations, tokenIssued);
    }
  };
  const requests = TRACE_NAMES.filter((name) => !OUTBOUND.has(name as OutboundTraceName)).map((name) => {
    return subscribeTo(traceChannel(name), { start, asyncEnd: ended });
  });
  return [...requests, countCalls(sink)];
}

/**
 * The outbound calls, counted once into each sink however many servers record into it: a call
 * has no server, and the servers of one process sharing OpenTelemetry's meter must not count it
 * once each. The subscription lives while one server records into the sink.
 */
const outboundBySink = new Map<FigureSink, { users: number; stop: () => void }>();

function countCalls(sink: FigureSink): () => void {
  let shared = outboundBySink.get(sink);
  if (shared === undefined) {
    const calls = new LabelSets(FIGURES.outboundCalls);
    const called = (context: object) => {
      const call = context as OutboundTrace;
      sink.count(FIGURES.outboundCalls, calls.of(call.call, call.outcome ?? 'error', call.reason));
    };
    const stops = [...OUTBOUND].map((name) => subscribeTo(traceChannel(name), { asyncEnd: called }));
    shared = { users: 0, stop: () => stops.forEach((stop) => stop()) };
    outboundBySink.set(sink, shared);
  }
  shared.users++;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--shared.users === 0) {
      shared.stop();
      outboundBySink.delete(sink);
    }
  };
}
