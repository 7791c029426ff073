import type { ServerEventBase } from './base.js';

/*
 * The operator's changes to clients (issue 41): made with the CLI (`clients add`, `update`,
 * `disable`, `suspend`, ...), or by the host's own code calling the operator functions
 * (`registerClient`, `updateClient`, `rotateClientSecret`) with the server. Each says
 * `by: 'operator'`, as `consent.revoked` does for the CLI's `grants revoke`, and carries no
 * request id unless the host's own request made it. None carries a secret: `client.added` and
 * `client.updated` say whether a secret was made, never what it is.
 */

/** What every operator's change of a client says: which client, whose, and who acted. */
interface OperatorClientEventBase extends ServerEventBase {
  clientId: string;
  /** The member the client belongs to (their account id); absent: the operator's. */
  ownerId?: string;
  /** The operator (the CLI, or the host's code calling the operator functions). */
  by: 'operator';
}

/** The operator registered a client (`clients add`, `registerClient`). */
export interface ClientAddedEvent extends OperatorClientEventBase {
  type: 'client.added';
  applicationName: string;
  grantType: 'authorization_code' | 'device_code' | 'implicit' | 'client_credentials';
  /** A public client (no secret); `false`: a secret was made and shown once. */
  public: boolean;
  scopes: string[];
}

/** The operator changed a client in place (`clients update`, `updateClient`): the fields changed, by name. */
export interface ClientUpdatedEvent extends OperatorClientEventBase {
  type: 'client.updated';
  /**
   * The client's fields that changed (`applicationName`, `redirectUri`, `grantType`, `scopes`,
   * `defaultScopes`, ...), and `public` when it became public or confidential.
   */
  changed: string[];
  /** A new secret was made and shown once (the client became confidential). */
  secretIssued: boolean;
}

/** The operator replaced a client's secret (`clients rotate-secret`); the old one stopped at once. */
export interface ClientSecretRotatedEvent extends OperatorClientEventBase {
  type: 'client.secret_rotated';
}

/** The operator disabled a client (`clients disable`, `clients suspend ID`): its tokens stopped working. */
export interface ClientDisabledEvent extends OperatorClientEventBase {
  type: 'client.disabled';
}

/** The operator let a disabled client work again (`clients enable`). */
export interface ClientEnabledEvent extends OperatorClientEventBase {
  type: 'client.enabled';
}

/**
 * The operator deleted a client with its grants (`clients remove`). Without its owner: the
 * deletion is one write, and the client's earlier lines (`app.created`, `client.transferred`) say
 * whose it was.
 */
export interface ClientRemovedEvent extends Omit<OperatorClientEventBase, 'ownerId'> {
  type: 'client.removed';
}

/** The operator approved a member's client waiting for approval (`clients approve`). */
export interface ClientApprovedEvent extends OperatorClientEventBase {
  type: 'client.approved';
}

/** The operator vouched for a client (`clients verify`). */
export interface ClientVerifiedEvent extends OperatorClientEventBase {
  type: 'client.verified';
}

/** The operator took back their word for a client (`clients unverify`): the reach cap applies again. */
export interface ClientUnverifiedEvent extends OperatorClientEventBase {
  type: 'client.unverified';
}

/** The operator gave a client to another owner (`clients transfer`). */
export interface ClientTransferredEvent extends OperatorClientEventBase {
  type: 'client.transferred';
  /** The new owner; absent: the operator. */
  ownerId?: string;
  /** The owner before; absent: the operator. */
  previousOwnerId?: string;
}

/**
 * The operator suspended a member's clients (`clients suspend --owner`): each was disabled, and
 * the member may create no other while one stays disabled. Once for all of them; those disabled
 * already are not counted.
 */
export interface ClientSuspendedEvent extends ServerEventBase {
  type: 'client.suspended';
  /** The member whose clients were suspended. */
  ownerId: string;
  /** The clients disabled now. */
  clientIds: string[];
  /** How many (the audit trail's list of ids is cut at 32; the count is not). */
  count: number;
  by: 'operator';
}

/** Every operator's change of a client. */
export type OperatorClientEvent =
  | ClientAddedEvent
  | ClientUpdatedEvent
  | ClientSecretRotatedEvent
  | ClientDisabledEvent
  | ClientEnabledEvent
  | ClientRemovedEvent
  | ClientApprovedEvent
  | ClientVerifiedEvent
  | ClientUnverifiedEvent
  | ClientTransferredEvent
  | ClientSuspendedEvent;
