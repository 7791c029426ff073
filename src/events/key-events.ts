import type { ServerEventBase } from './base.js';

/*
 * The events of the signing keys (OpenID Connect): those the server makes itself, and the
 * operator's rotations and retirements (the CLI's `keys rotate` and `keys retire`, reported to
 * the command's own events: its `--audit-file`). Each carries key ids and algorithms, which the
 * JWKS publishes, never a private part.
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

/**
 * The operator rotated the signing keys (`keys rotate`): the key that waited as `next` signs
 * from now on (or a new one, when none waited), and a new `next` key was made and published. The
 * key that signed before stays published until it is retired.
 */
export interface SigningKeyRotatedEvent extends ServerEventBase {
  type: 'signing_key.rotated';
  /** The key that signs from now on. */
  kid: string;
  alg: string;
  /** The key that signed before; absent: there was none (the first keys). */
  previousKid?: string;
  /** The new `next` key. */
  nextKid: string;
  by: 'operator';
}

/** The operator retired a signing key (`keys retire`): it left the JWKS, and its tokens stop verifying. */
export interface SigningKeyRetiredEvent extends ServerEventBase {
  type: 'signing_key.retired';
  kid: string;
  alg: string;
  /** Retired with `--force`: an older active key, within two minutes of the rotation (a compromised key). */
  forced: boolean;
  by: 'operator';
}

/** Every event of the signing keys. */
export type KeyEvent = SigningKeyCreatedEvent | SigningKeyRotatedEvent | SigningKeyRetiredEvent;
