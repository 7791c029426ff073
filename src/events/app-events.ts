import type { ServerEventBase } from './base.js';

/*
 * The events of members' applications (the developer page): every change a member makes, and the
 * reach cap refusing someone. None carries a secret: `app.created` and `app.secret_rotated` say
 * that a secret was made, so a host can tell the member (an e-mail: "a new secret was created for
 * your application"), never what it is.
 */

/** What every event of a member's application says: which application, whose, and who acted. */
interface AppEventBase extends ServerEventBase {
  clientId: string;
  /** The member the application belongs to (their account id). */
  ownerId: string;
}

/** A member created an application on the developer page. */
export interface AppCreatedEvent extends AppEventBase {
  type: 'app.created';
  /** A confidential application: a secret was made and shown to the member once. */
  confidential: boolean;
  /** It waits for the operator's approval (`developerApps.requireApproval`). */
  awaitingApproval: boolean;
}

/** A member changed their application: the fields changed, by name. */
export interface AppUpdatedEvent extends AppEventBase {
  type: 'app.updated';
  changed: string[];
}

/** A member made a new secret for their application; the old one works until `previousValidUntil`. */
export interface AppSecretRotatedEvent extends AppEventBase {
  type: 'app.secret_rotated';
  /** Until when the previous secret is still accepted (epoch ms); absent: it stopped at once. */
  previousValidUntil?: number;
}

/** A member deleted their application: its grants and tokens ended with it. */
export interface AppDeletedEvent extends AppEventBase {
  type: 'app.deleted';
}

/**
 * A member's application the operator has not verified was refused to one more member: it reached
 * `developerApps.unverifiedReach`. The person saw a page saying so, and the application
 * `access_denied`.
 */
export interface AppReachCappedEvent extends AppEventBase {
  type: 'app.reach_capped';
  userId: string;
  /** The cap it reached. */
  reach: number;
}

/** Every event of members' applications. */
export type AppEvent =
  AppCreatedEvent | AppUpdatedEvent | AppSecretRotatedEvent | AppDeletedEvent | AppReachCappedEvent;
