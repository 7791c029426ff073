import { AsyncLocalStorage } from 'node:async_hooks';
import {
  TRACE_NAMES,
  subscribeTo,
  traceChannel,
  type EndpointTraceName,
  type OutboundTrace,
  type OutboundTraceName,
  type RequestTrace,
} from './channels.js';
import type { Figure, FigureSink } from './figures.js';
import { recordFigures, type FigureSource } from './record.js';
import { DURATION_BUCKETS } from './series.js';

/*
 * OpenTelemetry, optional (issue 41): `@opentelemetry/api` is an optional peer dependency, loaded
 * by `openTelemetry()` alone, with a dynamic `import()`. Nothing else in the library names it, so
 * an app that never calls `openTelemetry()` loads none of it, installed or not. No SDK: the spans
 * and instruments go to whatever providers the host registered globally (`NodeSDK`, say).
 */

/** Options of {@link openTelemetry}. */
export interface OpenTelemetryOptions {
  /** Spans for the tracing channels. Default `true`; `false` for the figures alone. */
  traces?: boolean;
  /**
   * The server whose figures go to the meter ({@link recordFigures} on `figures`), until
   * `stop()`. Without it, nothing is counted unless you call `recordFigures` yourself.
   */
  server?: FigureSource;
}

/** What {@link openTelemetry} started: the figures' sink, and how to stop the spans. */
export interface OpenTelemetryInstrumentation {
  /**
   * Counters and histograms through the global meter (`metrics.getMeter('openid-oauth-bridge')`),
   * one instrument per figure, named by its `otel` name: a sink for the server's figures.
   */
  readonly figures: FigureSink;
  /**
   * Unsubscribes from every tracing channel and, with `server`, stops recording its figures:
   * requests are no longer traced, and a span still in flight is not recorded. Call it when the
   * server no longer takes requests. Idempotent.
   */
  stop(): void;
}

/*
 * The part of `@opentelemetry/api` used here, declared here rather than imported: the library,
 * its declarations and its documentation's snippets compile without the package.
 */
type Attributes = Record<string, string | number>;
/** A `Context` of the API: opaque here. */
type Context = object;
interface Span {
  setAttributes(attributes: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}
interface Tracer {
  startSpan(name: string, options: { kind: number; attributes: Attributes }, context: Context): Span;
}
interface Counter {
  add(value: number, attributes: Attributes): void;
}
interface Histogram {
  record(value: number, attributes: Attributes): void;
}
interface Meter {
  createCounter(name: string, options: { description: string }): Counter;
  createHistogram(
    name: string,
    options: { description: string; unit: string; advice: { explicitBucketBoundaries: number[] } },
  ): Histogram;
}
interface OTel {
  trace: {
    getTracer(name: string): Tracer;
    setSpan(context: Context, span: Span): Context;
    getSpan(context: Context): Span | undefined;
  };
  context: { active(): Context };
  metrics: { getMeter(name: string): Meter };
  SpanKind: { SERVER: number; CLIENT: number; INTERNAL: number };
  SpanStatusCode: { ERROR: number };
}

/** A variable, so that neither TypeScript nor a bundler goes looking for the optional package. */
const API_PACKAGE = '@opentelemetry/api';

/** The instrumentation scope's name: the tracer's and the meter's. */
const SCOPE = 'openid-oauth-bridge';

/**
 * Spans for every request to the server's endpoints and every call it makes to another server
 * (OpenID 2.0 discovery and verification, client metadata documents, the Steam Web API), through
 * the global tracer provider, and a {@link FigureSink} on the global meter. Call it once, after
 * the OpenTelemetry SDK is started (its context manager is then the one the spans nest in), and
 * before the server takes requests. Each span carries the channels' bounded fields only: never a
 * token, code, secret, cookie, URL or raw client id.
 *
 * @example
 * import { openTelemetry } from 'openid-oauth-bridge/observability';
 * const sdk = new NodeSDK({ traceExporter, metricReader });
 * sdk.start();
 * const otel = await openTelemetry({ server }); // spans, and the server's figures on the meter
 * // on shutdown: otel.stop(); await sdk.shutdown();
 *
 * @throws {Error} (the promise rejects) when `@opentelemetry/api` cannot be loaded: it is an
 * optional peer dependency, `npm install @opentelemetry/api`.
 */
export async function openTelemetry(
  options: OpenTelemetryOptions = {},
): Promise<OpenTelemetryInstrumentation> {
  const api = await loadApi();
  let own = shared.get(api);
  if (own === undefined) shared.set(api, (own = { figures: meterSink(api), users: 0, spans: undefined }));
  own.users++;
  const stopSpans = options.traces === false ? () => {} : sharedSpans(api, own);
  const { figures } = own;
  const stopFigures = options.server === undefined ? () => {} : recordFigures(options.server, figures);
  let stopped = false;
  return {
    figures,
    stop() {
      if (stopped) return;
      stopped = true;
      stopSpans();
      stopFigures();
      // The last one out: a later call starts afresh, on the meter provider set by then.
      if (--own.users === 0) shared.delete(api);
    },
  };
}

/**
 * What the calls of one process share while one of them runs, per API module: one sink on the
 * meter and one set of span subscribers, however many servers call {@link openTelemetry}. A span
 * per request or call, and an outbound call counted once: the channels are the process's, not a
 * server's.
 */
interface Shared {
  figures: FigureSink;
  users: number;
  spans: { users: number; stop: () => void } | undefined;
}
const shared = new WeakMap<OTel, Shared>();

function sharedSpans(api: OTel, own: Shared): () => void {
  own.spans ??= { users: 0, stop: traceSpans(api) };
  const spans = own.spans;
  spans.users++;
  return () => {
    if (--spans.users === 0) {
      spans.stop();
      own.spans = undefined;
    }
  };
}

async function loadApi(): Promise<OTel> {
  try {
    const loaded = (await import(API_PACKAGE)) as OTel & { default?: OTel };
    // From ESM, a CommonJS build's names may be on `default` only.
    return typeof loaded.trace === 'object' ? loaded : loaded.default!;
  } catch (err) {
    throw new Error(
      'openTelemetry() needs @opentelemetry/api, an optional peer dependency: npm install @opentelemetry/api',
      { cause: err },
    );
  }
}

type Traced = (RequestTrace | OutboundTrace) & { error?: unknown };

const OUTBOUND: ReadonlySet<string> = new Set<OutboundTraceName>([
  'openid_discovery',
  'openid_verification',
  'client_document_fetch',
  'steam_web_api',
]);

/**
 * Subscribes to every channel: a span starts with each request or call (in the `start` channel's
 * store, so that what runs inside it, an outbound call say, nests in it) and ends at `asyncEnd`
 * with the final fields. Returns the unsubscriber.
 */
function traceSpans(api: OTel): () => void {
  const tracer = api.trace.getTracer(SCOPE);
  // The parent of the library's own spans, whatever context manager the host has, or none.
  const own = new AsyncLocalStorage<Context>();
  // The host's context manager's, so that others' spans (an HTTP client's) nest in ours too.
  const host = contextManagerStorage(api);
  const live = new WeakMap<object, { span: Span; context: Context }>();
  const undo: (() => void)[] = [];

  for (const name of TRACE_NAMES) {
    const channel = traceChannel(name);
    const begin = (data: object): Context => {
      let entry = live.get(data);
      if (entry === undefined) {
        const parent = own.getStore() ?? api.context.active();
        const span = tracer.startSpan(
          spanName(name, data as Traced),
          {
            kind: spanKind(api, name, parent),
            attributes: startAttributes(data as Traced),
          },
          parent,
        );
        entry = { span, context: api.trace.setSpan(parent, span) };
        live.set(data, entry);
      }
      return entry.context;
    };
    const finish = (data: object) => {
      const entry = live.get(data);
      if (entry === undefined) return;
      live.delete(data);
      const traced = data as Traced;
      entry.span.setAttributes(endAttributes(traced));
      if (failed(traced)) {
        entry.span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: 'errorCode' in traced ? traced.errorCode : (traced as OutboundTrace).reason,
        });
      }
      entry.span.end();
    };
    const handlers = {
      start: (data: object) => void begin(data),
      // A run that threw at once has no asyncEnd: it ends here, its error already set.
      end: (data: object) => {
        if ((data as Traced).error !== undefined) finish(data);
      },
      // The outcome, reason and error code are on the context by asyncEnd.
      asyncEnd: finish,
    };
    const unsubscribe = subscribeTo(channel, handlers);
    // `bearer` passes the request on to the host's route, which must not run inside its span.
    const stores = name === 'bearer' ? [] : [own, ...(host === undefined ? [] : [host])];
    for (const store of stores) channel.start.bindStore(store, begin);
    undo.push(() => {
      for (const store of stores) channel.start.unbindStore(store);
      unsubscribe();
    });
  }
  return () => {
    for (const step of undo.splice(0)) step();
  };
}

/**
 * The AsyncLocalStorage of the host's context manager (`AsyncLocalStorageContextManager`, which
 * `NodeSDK` registers), when it has one: bound to the channels' `start`, the spans of other
 * instrumentations made inside a request nest in the library's span. The API offers no public
 * way to it (open-telemetry/opentelemetry-js#6088); without it, only the library's own spans nest.
 */
function contextManagerStorage(api: OTel): AsyncLocalStorage<Context> | undefined {
  const context = api.context as unknown as { _getContextManager?: () => unknown };
  const manager = context._getContextManager?.() as { _asyncLocalStorage?: unknown } | undefined;
  const storage = manager?._asyncLocalStorage;
  return storage instanceof AsyncLocalStorage ? (storage as AsyncLocalStorage<Context>) : undefined;
}

/** HTTP methods by their semantic-convention names; any other is `_OTHER`. */
const METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

const methodOf = (method: string | undefined) =>
  method === undefined ? undefined : METHODS.has(method) ? method : '_OTHER';

/** `POST /oauth/token` (the HTTP semantic conventions' `{method} {http.route}`), else the channel's name. */
function spanName(name: EndpointTraceName | OutboundTraceName, data: Traced): string {
  if (OUTBOUND.has(name)) return name;
  const { method, route } = data as RequestTrace;
  return route === undefined ? `oauth ${name}` : `${methodOf(method) ?? 'HTTP'} ${route}`;
}

/**
 * `CLIENT` for an outbound call; for a request, `SERVER` when nothing else traces it (no active
 * span: no HTTP instrumentation), else `INTERNAL` inside the HTTP server span; `bearer` is a step
 * in front of the host's route, `INTERNAL`.
 */
function spanKind(api: OTel, name: string, parent: Context): number {
  if (OUTBOUND.has(name)) return api.SpanKind.CLIENT;
  if (name === 'bearer' || api.trace.getSpan(parent) !== undefined) return api.SpanKind.INTERNAL;
  return api.SpanKind.SERVER;
}

/** What is known when a request or call starts (for samplers). */
function startAttributes(data: Traced): Attributes {
  if ('call' in data) return data.provider === undefined ? {} : { 'openid.provider': data.provider };
  return defined({
    'oauth.endpoint': data.endpoint,
    'http.request.method': methodOf(data.method),
    'http.route': data.route,
  });
}

/** The final fields: how it ended, and what the request came to know. */
function endAttributes(data: Traced): Attributes {
  if ('call' in data) {
    return defined({
      'openid.provider': data.provider,
      'oauth.outcome': data.outcome,
      'error.type': data.outcome === 'error' ? (data.reason ?? 'failed') : undefined,
    });
  }
  return defined({
    'http.response.status_code': data.status,
    'oauth.grant_type': data.grantType,
    'oauth.client.kind': data.clientKind,
    'openid.provider': data.provider,
    'oauth.outcome': data.outcome,
    'error.type': data.errorCode,
  });
}

/**
 * Whether a span's status is an error. An outbound call that failed is one; a request refused
 * with a 4xx is not (the HTTP semantic conventions: the client's error, not the server's), its
 * `error.type` says why; a 5xx or a request that ended without an answer is.
 */
function failed(data: Traced): boolean {
  if (data.outcome !== 'error') return false;
  if ('call' in data) return true;
  return data.status === undefined || data.status >= 500;
}

function defined(attributes: Record<string, string | number | undefined>): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as Attributes;
}

/**
 * A figure's label names as attribute names: the semantic conventions' where they exist, the
 * spans' own otherwise (`oauth.*`), so a span and a series are filtered by the same names.
 */
const ATTRIBUTE_NAMES: Readonly<Record<string, string>> = {
  method: 'http.request.method',
  route: 'http.route',
  status: 'http.response.status_code',
  status_code: 'http.response.status_code',
  error: 'error.type',
  error_code: 'error.type',
  reason: 'error.type',
  provider: 'openid.provider',
  client_kind: 'oauth.client.kind',
};

const attributeName = (label: string) => ATTRIBUTE_NAMES[label] ?? `oauth.${label}`;

/**
 * A {@link FigureSink} on the global meter: a counter or a histogram (seconds) per figure, made
 * on its first use, named by the figure's `otel` name. The meter is taken on the first figure,
 * so an SDK started after {@link openTelemetry} still receives them.
 */
export function meterSink(api: OTel): FigureSink {
  let meter: Meter | undefined;
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();
  const attributesOf = (labels: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(labels).map(([label, value]) => [attributeName(label), value]));
  const instrument = <I>(instruments: Map<string, I>, figure: Figure, make: (m: Meter) => I): I => {
    let made = instruments.get(figure.otel);
    if (made === undefined) {
      meter ??= api.metrics.getMeter(SCOPE);
      made = make(meter);
      instruments.set(figure.otel, made);
    }
    return made;
  };
  return {
    count(figure, labels, by = 1) {
      instrument(counters, figure, (m) => m.createCounter(figure.otel, { description: figure.help })).add(
        by,
        attributesOf(labels),
      );
    },
    observe(figure, labels, seconds) {
      instrument(histograms, figure, (m) =>
        m.createHistogram(figure.otel, {
          description: figure.help,
          unit: 's',
          advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
        }),
      ).record(seconds, attributesOf(labels));
    },
  };
}
