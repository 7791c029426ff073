/**
 * The demo's realms, shared by its two resources: the API (`GET /v1/realms`) and the MCP server's
 * tools (`list_realms`, `write_realm`) show the same realms to the same user. A real app keeps them
 * in its database.
 */
import { randomUUID } from 'node:crypto';

/** The scope that lets a client list the user's realms; shown on the consent page. */
export const REALMS_SCOPE = 'realms:read';
/** The scope that lets a client add realms (the MCP server's `write_realm` tool). */
export const REALMS_WRITE_SCOPE = 'realms:write';

export interface Realm {
  id: string;
  name: string;
}

export interface Realms {
  /** The user's realms; a user seen for the first time gets a few, so the demo has something to show. */
  list(userId: string): Realm[];
  /** Adds a realm to the user's list; resolves it. */
  add(userId: string, name: string): Realm;
}

/** Realms in memory, for one run of the demo. */
export function memoryRealms(): Realms {
  const byUser = new Map<string, Realm[]>();
  const list = (userId: string): Realm[] => {
    let realms = byUser.get(userId);
    if (!realms) {
      realms = ['Sandbox', 'Staging', 'Production'].map((name) => ({ id: randomUUID(), name }));
      byUser.set(userId, realms);
    }
    return realms;
  };
  return {
    list,
    add(userId, name) {
      const realm = { id: randomUUID(), name };
      list(userId).push(realm);
      return realm;
    },
  };
}
