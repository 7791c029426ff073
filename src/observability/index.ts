/**
 * `openid-oauth-bridge/observability`: what an operator sees of an authorization server. Its
 * tracing channels (Node's `diagnostics_channel`, no dependency), and the names of the channels a
 * subscriber can subscribe to; spans and figures through OpenTelemetry when the host installs
 * `@opentelemetry/api` and calls {@link openTelemetry}. See docs/operating.md.
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
