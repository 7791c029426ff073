import type { ServerEvents } from '../events/emitter.js';
import { emit } from '../events/emit.js';
import type { Storage } from '../storage/types.js';

/**
 * What the grant rules need of the server: its storage, clock, token options and events. The
 * authorization server has all of it; the CLI builds one of its own.
 */
export interface GrantDeps {
  readonly storage: Storage;
  readonly clock: () => number;
  readonly options: {
    readonly tokens: {
      /** Access token lifetime in seconds. */
      readonly accessTokenTtl: number;
      /** Authorization code lifetime in seconds. */
      readonly codeTtl: number;
      /** Replace the refresh token at each refresh; reuse of a replaced one revokes the grant. */
      readonly rotateRefreshTokens: boolean;
    };
  };
  readonly events: ServerEvents;
}

/**
 * Runs a write that follows a commit point. The commit has happened, so its failure must not fail
 * the request (the client would retry, and the retry would look like a replay): it is reported as
 * a `server.error` event and the request carries on.
 */
export async function afterCommit(deps: GrantDeps, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    emit(deps, { type: 'server.error', endpoint: 'token', error });
  }
}
