import type { ServerEventBase } from './base.js';

/*
 * The events of the signing keys (OpenID Connect) that the server itself changes. Rotating and
 * retiring keys is the CLI's, in a process of its own with no server to report to.
 */

/**
 * The server made a signing key: the first keys (`active` and `next`) when the storage had none,
 * or a `next` key when none was waiting (a rotation cut short, a next key retired). Only the
 * instance that made it reports it. Carries the key's id and algorithm, which the JWKS publishes,
 * never its private part.
 */
export interface SigningKeyCreatedEvent extends ServerEventBase {
  type: 'signing_key.created';
  kid: string;
  alg: string;
  /** `active`: it signs from now on; `next`: published, signing from the next rotation. */
  state: 'active' | 'next';
}

/** Every event of the signing keys. */
export type KeyEvent = SigningKeyCreatedEvent;
