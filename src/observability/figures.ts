/*
 * The figures an operator reads (issue 41): counters and latency histograms, defined once here and
 * fed from the server's events and tracing channels. Each place that shows them is a sink: the
 * Prometheus router (the text format), OpenTelemetry's global meter when `@opentelemetry/api` is
 * installed. Labels are bounded words (a grant type, an outcome, an error code, a client kind, a
 * provider's configured name): the number of series never grows with clients or users.
 */

/** One figure: its names where each sink shows it, what it measures, and its labels. */
export interface Figure {
  /** `counter`: a count that only goes up; `histogram`: durations in seconds. */
  kind: 'counter' | 'histogram';
  /** Its Prometheus name (`oauth_token_requests_total`). */
  prometheus: string;
  /** Its OpenTelemetry instrument name (a semantic convention's where one exists). */
  otel: string;
  /** One line on what it counts, for `# HELP` and the instrument's description. */
  help: string;
  /** Its label names, in the order the text format writes them. */
  labels: readonly string[];
}

/** Where figures go: a sink counts and observes, each call with the figure's own labels. */
export interface FigureSink {
  count(figure: Figure, labels: Readonly<Record<string, string>>, by?: number): void;
  observe(figure: Figure, labels: Readonly<Record<string, string>>, seconds: number): void;
}
