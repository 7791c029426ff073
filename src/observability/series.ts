import type { Figure } from './figures.js';

/*
 * The figures an authorization server keeps (issue 41), listed once: what `recordFigures` feeds
 * and every sink shows (the Prometheus router, OpenTelemetry's meter). Each label's values are
 * words the library or the operator's configuration chooses, so the number of series is the same
 * with ten clients or a million: never a client id (any URL may be one), a user, a token.
 */

const counter = (prometheus: string, otel: string, help: string, labels: readonly string[]): Figure => ({
  kind: 'counter',
  prometheus,
  otel,
  help,
  labels,
});

/** Every figure, by the name `recordFigures` feeds it under. */
export const FIGURES = {
  /** Token endpoint requests (from its tracing channel). */
  tokenRequests: counter(
    'oauth_token_requests_total',
    'oauth.token.requests',
    'Token endpoint requests, by grant type (other: one this server does not know) and outcome; error: the OAuth error code.',
    ['grant_type', 'outcome', 'error'],
  ),
  /** How authorizations ended once the user was asked (codes and tokens from the traces, the rest from the events). */
  authorizations: counter(
    'oauth_authorizations_total',
    'oauth.authorizations',
    'Authorizations that ended: code or token issued, denied by the user, or refused by a team rule.',
    ['outcome'],
  ),
  /** Logins at the configured providers (from the events). */
  logins: counter(
    'oauth_logins_total',
    'oauth.logins',
    'Logins at the OpenID providers, by configured provider and outcome (success, failed, error).',
    ['provider', 'outcome'],
  ),
  /** Failed client authentications (from the events). */
  clientAuthenticationFailures: counter(
    'oauth_client_authentication_failures_total',
    'oauth.client.authentication_failures',
    'Failed client authentications, by endpoint and kind of the client named (unknown: none).',
    ['endpoint', 'client_kind'],
  ),
  /** Replays detected: a rotated refresh token or a used code presented again (from the events). */
  replays: counter(
    'oauth_replays_detected_total',
    'oauth.replays_detected',
    'Replays detected, each revoking its grant: a rotated refresh token or a used code presented again.',
    ['grant_type'],
  ),
  /** Requests the rate limits refused (from the events). */
  rateLimited: counter(
    'oauth_rate_limited_requests_total',
    'oauth.rate_limited_requests',
    'Requests refused by a rate limit, by limit and what it counts under.',
    ['limit', 'per'],
  ),
  /** Dynamic client registrations (from the registration endpoint's tracing channel). */
  registrations: counter(
    'oauth_client_registrations_total',
    'oauth.client.registrations',
    'Dynamic client registration requests (RFC 7591), by outcome; error: the OAuth error code.',
    ['outcome', 'error'],
  ),
  /** Calls to other servers (from the outbound tracing channels, for the whole process). */
  outboundCalls: counter(
    'oauth_outbound_calls_total',
    'oauth.outbound.calls',
    'Calls to other servers (OpenID discovery and verification, client metadata documents, the Steam Web API), by call and outcome; reason: why one failed.',
    ['call', 'outcome', 'reason'],
  ),
  /** Requests answered 503 because the storage did not answer (from the events). */
  storageUnavailable: counter(
    'oauth_storage_unavailable_total',
    'oauth.storage.unavailable',
    'Requests answered 503 because the storage was unavailable, by endpoint.',
    ['endpoint'],
  ),
  /** Every request to an endpoint, in seconds (from the tracing channels). */
  requestDuration: {
    kind: 'histogram',
    prometheus: 'oauth_request_duration_seconds',
    otel: 'http.server.request.duration',
    help: 'Duration of requests to the endpoints in seconds, by endpoint and outcome.',
    labels: ['endpoint', 'outcome'],
  },
} as const satisfies Record<string, Figure>;

/** Bucket bounds of the duration histograms, in seconds: the HTTP semantic conventions'. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];
