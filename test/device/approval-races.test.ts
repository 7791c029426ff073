/**
 * A device approval's commit point (issue 38): the person's consent is recorded, then the answer is
 * saved for the device; when the answer cannot be saved (the request expired meanwhile, or another
 * person answered it first), the consent is taken back. Whatever the interleaving of the storage
 * calls, chosen by fast-check's scheduler over the conformance kit's instrumented storage, no grant
 * stands that no device received, and what a person trusted the client with before stays. On the
 * memory adapter and on PostgreSQL (where two runs of 8 concurrent approvals once left a grant
 * standing for nothing).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage, memoryStorage, registerClient, type Storage } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { approveDevice, findByUserCode, startDeviceAuthorization } from '../../src/grants/device.js';
import { recordConsent, standingGrant } from '../../src/grants/grant.js';
import { ephemeralKeys, type DeviceDecision } from '../../src/storage/keys.js';
import { grantDeps } from '../../src/testing/conformance/flow.js';
import { instrumentStorage } from '../../src/testing/conformance/instrument.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from '../support/databases.js';

const SCOPES = ['realms', 'profile'];

/**
 * One run: a device request; three people approve it at once (one of them trusted the client with
 * `realms` before), while the request may expire; every storage call waits for the scheduler.
 */
async function run(storage: Storage, s: fc.Scheduler, expires: boolean): Promise<void> {
  let now = Date.now();
  const deps = { ...grantDeps(storage, false), clock: () => now };
  const clientId = `device-${Math.random().toString(36).slice(2)}`;
  await registerClient(storage, {
    clientId,
    applicationName: 'Realm CLI',
    grantType: 'device_code',
    public: true,
    scopes: SCOPES,
  });
  const client = (await storage.clients.find(clientId))!;
  const started = await startDeviceAuthorization(
    deps,
    client,
    { scopes: SCOPES, resources: [] },
    {
      codeTtl: 600,
      interval: 5,
      verificationUri: 'https://as.example/oauth/device',
    },
  );
  const live = (await findByUserCode(deps, started.user_code))!;
  const people = ['ann', 'ben', 'cat'].map((name) => `${name}-${clientId}`);
  // Ann trusted the client with `realms` before: losing must leave her that, and only that.
  const { grant: annBefore } = await recordConsent(deps, people[0]!, clientId, ['realms'], client);

  const scheduled = instrumentStorage(storage, async (call, go) => {
    await s.schedule(Promise.resolve(), call.method);
    return go();
  });
  const scheduledDeps = { ...deps, storage: scheduled };
  const approvals = people.map((userId) =>
    approveDevice(scheduledDeps, live, { userId }, client).then(
      (grant) => ({ userId, grant }),
      (error: unknown) => ({ userId, grant: null, error }),
    ),
  );
  if (expires) {
    void s.schedule(Promise.resolve(), 'the request expires').then(() => {
      now = live.request.expiresAt;
    });
  }
  await s.waitFor(Promise.all(approvals));
  const outcomes = await Promise.all(approvals);

  const winners = outcomes.filter((o) => o.grant !== null);
  expect(winners.length).toBeLessThanOrEqual(1);
  const stored = await storage.ephemeral.get(ephemeralKeys.deviceDecision(live.hash), now);
  const decision = stored === null ? null : (JSON.parse(stored) as DeviceDecision);
  // The device received the winner's answer, or none at all.
  expect(decision === null ? null : decision.approved && decision.grantId).toBe(
    winners[0]?.grant?.grantId ?? null,
  );
  for (const { userId, grant } of outcomes) {
    const standing = await standingGrant({ storage }, userId, clientId);
    if (grant !== null) {
      expect(standing?.grantId).toBe(grant.grantId);
      expect(standing?.scopes).toEqual(expect.arrayContaining(SCOPES));
    } else if (userId === people[0]) {
      expect(standing?.grantId).toBe(annBefore.grantId);
      expect(standing?.scopes).toEqual(['realms']);
    } else {
      expect(standing).toBeNull();
    }
  }
}

function races(storage: () => Storage, numRuns: number) {
  it('three people approve at once: one device answer, no grant for the others', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => run(storage(), s, false)),
      { numRuns },
    );
  });

  it('the request expires while they approve: no grant stands for an answer never saved', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => run(storage(), s, true)),
      { numRuns },
    );
  });
}

describe('device approvals racing, memory storage', () => {
  const storage = memoryStorage();
  races(() => storage, 60);
});

const postgres = await postgresAvailability();
describe.skipIf(!postgres.ok)(
  `device approvals racing, PostgreSQL${postgres.ok ? '' : ` (NOT TESTED: ${postgres.reason})`}`,
  () => {
    const schema = uniqueSchema('device_races');
    let storage: SqlStorage;
    beforeAll(async () => {
      storage = await connectStorage(postgresUrlFor(schema), { migrate: true });
    });
    afterAll(async () => {
      await storage?.close();
      await dropSchema(schema);
    });
    races(() => storage, 15);
  },
);
