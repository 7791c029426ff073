import { emit } from '../events/emit.js';
import type { ServerEvents } from '../events/emitter.js';
import type { ServerEventInput } from '../events/types.js';
import type { Storage } from '../storage/types.js';
import type { RegistrationContext } from './registration.js';

/**
 * Where the operator's functions work (`registerClient`, `updateClient`, `rotateClientSecret`,
 * and the CLI's): the authorization server, or a storage alone. Given the server, a scope it does
 * not offer is refused (every scope of a client must be one of its `scopes`), and each change is
 * reported on `server.events` (`client.added`, `client.updated`, `client.secret_rotated`, ...),
 * so that its audit trail has it. A storage alone takes any well-formed scope, unless the context
 * names the offered ones, and reports nothing.
 */
export type RegistrationTarget =
  | Storage
  | {
      readonly storage: Storage;
      readonly options?: {
        readonly scopes: Readonly<Record<string, string>>;
        /** The server's profile: `'oauth2.1'` refuses implicit clients. */
        readonly profile?: 'oauth2' | 'oauth2.1';
      };
      /** Where each change is reported (the server's `events`); absent: nowhere. */
      readonly events?: ServerEvents;
      /** The events' clock (the server's `clock`); default `Date.now`. */
      readonly clock?: () => number;
    };

/** What an operator's function needs of its {@link RegistrationTarget}. */
export interface OperatorTarget {
  readonly storage: Storage;
  readonly context: RegistrationContext;
  /** Reports a change to the target's events; does nothing for a storage alone. */
  report(event: ServerEventInput): void;
}

/** The storage, the registration context and the events of a {@link RegistrationTarget}. */
export function targetOf(target: RegistrationTarget, context: RegistrationContext = {}): OperatorTarget {
  if (!('storage' in target)) return { storage: target, context, report: () => undefined };
  const { storage, options, events } = target;
  const reporter = events === undefined ? undefined : { events, clock: target.clock ?? Date.now };
  return {
    storage,
    context:
      options === undefined
        ? context
        : {
            offeredScopes: Object.keys(options.scopes),
            ...(options.profile === undefined ? {} : { profile: options.profile }),
            ...context,
          },
    report: (event) => (reporter === undefined ? undefined : emit(reporter, event)),
  };
}

/** The client's owner as an event names it: absent for the operator's own client. */
export function ownerOf(client: { readonly ownerId?: string | null }): { ownerId?: string } {
  return client.ownerId == null ? {} : { ownerId: client.ownerId };
}
