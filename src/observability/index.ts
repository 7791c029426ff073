/**
 * `openid-oauth-bridge/observability`: what an operator sees of an authorization server. Its
 * tracing channels (Node's `diagnostics_channel`, no dependency), and the names of the channels a
 * subscriber can subscribe to; spans and figures through OpenTelemetry when the host installs
 * `@opentelemetry/api` and calls {@link openTelemetry}; the same figures in the Prometheus text
 * format with {@link metricsRouter}. See docs/operating.md.
 *
 * @packageDocumentation
 */
export {
  TRACE_NAMES,
  traceChannel,
  type ClientKind,
  type EndpointTraceName,
  type OutboundTrace,
  type OutboundTraceName,
  type RequestTrace,
} from './channels.js';
export {
  openTelemetry,
  type OpenTelemetryInstrumentation,
  type OpenTelemetryOptions,
} from './opentelemetry.js';
export type { Figure, FigureSink } from './figures.js';

// The audit trail: the security-relevant events as JSON lines (auditTrail).
export {
  auditTrail,
  type AuditSource,
  type AuditTrail,
  type AuditTrailOptions,
  type AuditTrailTarget,
} from './audit.js';
export { AUDIT_EVENT_TYPES } from './audit-lines.js';

// The figures: Prometheus text (metricsRouter), any sink (recordFigures).
export { FIGURES } from './series.js';
export { recordFigures, type FigureSource } from './record.js';
export {
  loopbackOnly,
  metricsRouter,
  type MetricsRouter,
  type MetricsRouterOptions,
} from './metrics-router.js';
