/**
 * `openid-oauth-bridge/observability`: what an operator sees of an authorization server. Its
 * tracing channels (Node's `diagnostics_channel`, no dependency), and the names of the channels a
 * subscriber can subscribe to. See docs/operating.md.
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
