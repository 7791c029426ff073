import type { ConformanceSuite } from './api.js';
import { isNull, rejects, sameRecord } from './check.js';
import { clientRecord, freshId } from './fixtures.js';

/** `clients`: exact lookups by id and a unique `clientId`. */
export function clientTests({ describe, it, storage }: ConformanceSuite): void {
  describe('clients', () => {
    it('find: an unknown clientId gives null', async () => {
      isNull(
        await storage().clients.find(freshId('client')),
        'clients.find must resolve null for an unknown clientId',
      );
    });

    it('create then find: every field round-trips', async () => {
      const now = Date.now();
      const code = clientRecord(now);
      const implicit = clientRecord(now, {
        grantType: 'implicit',
        secretHash: null,
        scopes: [],
        disabled: true,
      });
      await storage().clients.create(code);
      await storage().clients.create(implicit);
      sameRecord(
        await storage().clients.find(code.clientId),
        code,
        'clients.find must return the client exactly as it was created',
      );
      sameRecord(
        await storage().clients.find(implicit.clientId),
        implicit,
        'clients.find must return an implicit client as created: secretHash null, scopes empty, disabled true',
      );
    });

    it('find: the id is compared exactly (case, prefix, trailing space)', async () => {
      const client = clientRecord(Date.now(), { clientId: `${freshId('Client')}-AbC` });
      await storage().clients.create(client);
      const lookalikes = [
        client.clientId.toLowerCase(),
        client.clientId.toUpperCase(),
        client.clientId.slice(0, -1),
        `${client.clientId} `,
      ];
      for (const id of lookalikes) {
        isNull(
          await storage().clients.find(id),
          `clients.find(${JSON.stringify(id)}) must resolve null: client ids are compared exactly and ` +
            `case-sensitively (a case-insensitive collation lets one client pass for another)`,
        );
      }
    });

    it('create: a taken clientId rejects and the first client is kept', async () => {
      const now = Date.now();
      const first = clientRecord(now);
      await storage().clients.create(first);
      const second = clientRecord(now + 1, { clientId: first.clientId, applicationName: 'Impostor' });
      await rejects(
        () => storage().clients.create(second),
        'clients.create must reject when the clientId is already taken',
      );
      sameRecord(
        await storage().clients.find(first.clientId),
        first,
        'clients.create with a taken clientId must leave the existing client unchanged',
      );
    });
  });
}
