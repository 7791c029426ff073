import assert from 'node:assert/strict';
import type { ConformanceSuite } from './api.js';
import { isNull, sameRecord } from './check.js';
import { clientRecord, freshId, without } from './fixtures.js';

/** `clients.find`: the one method of the client store on the request path. */
export function clientTests({ describe, it, storage, putClient }: ConformanceSuite): void {
  describe('clients.find', () => {
    it('returns the registered client, every field as registered', async () => {
      const client = clientRecord(Date.now(), {
        allowedTeams: ['team-a', 'team-b'],
        resources: ['https://api.printer.example/', 'https://printer.example/mcp'],
        registeredVia: 'dynamic',
      });
      await putClient(client);
      sameRecord(
        await storage().clients.find(client.clientId),
        client,
        'clients.find must return the client as registered (every field, optional ones included)',
      );
    });

    it('returns an implicit client (secretHash null) and a client without optional fields', async () => {
      const now = Date.now();
      const implicit = without(
        clientRecord(now, { grantType: 'implicit', secretHash: null }),
        'defaultScopes',
      );
      await putClient({ ...implicit, defaultScopes: null });
      const foundImplicit = await storage().clients.find(implicit.clientId);
      sameRecord(foundImplicit, implicit, 'clients.find must return an implicit client with secretHash null');
      assert.ok(
        foundImplicit.defaultScopes === undefined || foundImplicit.defaultScopes === null,
        `clients.find: defaultScopes was registered null, so it must be null or absent; ` +
          `received ${JSON.stringify(foundImplicit.defaultScopes)}`,
      );
      const minimal = without(
        clientRecord(now),
        'defaultScopes',
        'contacts',
        'postLogoutRedirectUris',
        'requirePkce',
        'allowedTeams',
        'resources',
        'registeredVia',
      );
      await putClient(minimal);
      const found = await storage().clients.find(minimal.clientId);
      sameRecord(found, minimal, 'clients.find must return a client registered without the optional fields');
      assert.ok(
        found.defaultScopes === undefined || found.defaultScopes === null,
        `clients.find: defaultScopes was not given, so it must be absent or null (meaning all of scopes); ` +
          `received ${JSON.stringify(found.defaultScopes)}`,
      );
      assert.ok(
        found.requirePkce === undefined || found.requirePkce === false,
        `clients.find: requirePkce was not given, so it must be absent or false; received ${JSON.stringify(found.requirePkce)}`,
      );
      assert.ok(
        found.contacts === undefined || (Array.isArray(found.contacts) && found.contacts.length === 0),
        `clients.find: contacts was not given, so it must be absent or empty; received ${JSON.stringify(found.contacts)}`,
      );
      assert.ok(
        found.postLogoutRedirectUris === undefined ||
          (Array.isArray(found.postLogoutRedirectUris) && found.postLogoutRedirectUris.length === 0),
        `clients.find: postLogoutRedirectUris was not given, so it must be absent or empty; received ${JSON.stringify(found.postLogoutRedirectUris)}`,
      );
      assert.ok(
        found.allowedTeams === undefined ||
          (Array.isArray(found.allowedTeams) && found.allowedTeams.length === 0),
        `clients.find: allowedTeams was not given, so it must be absent or empty; received ${JSON.stringify(found.allowedTeams)}`,
      );
      assert.ok(
        found.resources === undefined || (Array.isArray(found.resources) && found.resources.length === 0),
        `clients.find: resources was not given, so it must be absent or empty; received ${JSON.stringify(found.resources)}`,
      );
      assert.ok(
        found.registeredVia === undefined || found.registeredVia === 'operator',
        `clients.find: registeredVia was not given, so it must be absent or 'operator'; received ${JSON.stringify(found.registeredVia)}`,
      );
    });

    it('finds clients whose ids are names on Object.prototype (__proto__, constructor, toString)', async () => {
      // An adapter over a plain object loses `__proto__` and answers `constructor` with a function.
      for (const clientId of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
        const existing = await storage().clients.find(clientId);
        if (existing === null) {
          const client = clientRecord(Date.now(), { clientId });
          await putClient(client);
          sameRecord(
            await storage().clients.find(clientId),
            client,
            `clients.find must return the client registered with client_id ${JSON.stringify(clientId)} (a plain object's prototype hides it: use a Map, or Object.hasOwn)`,
          );
        } else {
          assert.equal(
            existing.clientId,
            clientId,
            `clients.find(${JSON.stringify(clientId)}) must return that client or null, not what a plain object inherits`,
          );
        }
      }
    });

    it('matches the client_id exactly: another case, a prefix, a suffix or an unknown id gives null', async () => {
      const client = clientRecord(Date.now(), { clientId: `${freshId('Client')}-Mixed` });
      await putClient(client);
      const near = [
        client.clientId.toLowerCase(),
        client.clientId.toUpperCase(),
        client.clientId.slice(0, -1),
        `${client.clientId}x`,
        `${client.clientId} `,
        ` ${client.clientId}`,
        freshId('client'),
      ];
      for (const clientId of near) {
        isNull(
          await storage().clients.find(clientId),
          `clients.find(${JSON.stringify(clientId)}) must resolve null: client ids are compared exactly ` +
            `(registered: ${JSON.stringify(client.clientId)})`,
        );
      }
    });

    it('returns a copy: changing what it returned, or what was registered, changes nothing stored', async () => {
      const client = clientRecord(Date.now());
      const registered = structuredClone(client);
      await putClient(registered);
      registered.scopes.push('admin');
      registered.contacts?.push('intruder@example.com');
      const first = await storage().clients.find(client.clientId);
      assert.ok(first, 'clients.find must return the registered client');
      first.scopes.push('admin');
      first.defaultScopes?.push('admin');
      first.applicationName = 'changed';
      sameRecord(
        await storage().clients.find(client.clientId),
        client,
        'clients.find must return the stored client, not an array or object the caller holds and can change',
      );
    });
  });
}
