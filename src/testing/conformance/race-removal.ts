import { recordConsent } from '../../grants/index.js';
import type { Storage } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal } from './check.js';
import {
  describeError,
  enrol,
  exchange,
  grantDeps,
  issue,
  refresh,
  settle,
  tokenLedger,
  type Outcome,
} from './flow.js';
import { instrumentStorage } from './instrument.js';

/** A view of `storage` whose `pauseAt`-th call waits until `release()`; `reached` says it is waiting. */
function pausable(storage: Storage, pauseAt: number) {
  let n = 0;
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const atGate = new Promise<void>((resolve) => (reached = resolve));
  const view = instrumentStorage(storage, async (_call, run) => {
    if (++n === pauseAt) {
      reached();
      await gate;
    }
    return run();
  });
  return { storage: view, reached: atGate, release };
}

/** How many storage calls `operation` makes on a clean run over `storage`. */
async function callsOf(storage: Storage, operation: (counted: Storage) => Promise<unknown>): Promise<number> {
  let calls = 0;
  await operation(instrumentStorage(storage, (_call, run) => (calls++, run())));
  return calls;
}

/**
 * Removing a client is an absolute revocation: once `clients.remove` resolves, no token issued
 * to the client works again, not even one minted by a refresh that was in flight, and not after
 * the client is registered again under the same id (which starts with no grant). A consent in
 * flight at the same moment must not bring the removed grant back: it read the grant before the
 * removal and saves it after. Each refresh and consent is paused before each of its storage calls
 * in turn while the client is removed; the client is registered again while they are paused, or
 * after they finish.
 */
export function removalRaceTests(suite: ConformanceSuite): void {
  const { it, storage } = suite;

  async function once(rotate: boolean, refreshAt: number, consentAt: number, again: 'during' | 'after') {
    const ledger = tokenLedger(storage());
    const deps = grantDeps(ledger.storage, rotate);
    const enrolment = await enrol(ledger.storage, (client) => suite.putClient(client));
    const clientId = enrolment.client.clientId;
    const tokens = await exchange(deps, enrolment, await issue(deps, enrolment));

    const refreshing = pausable(ledger.storage, refreshAt);
    const consenting = pausable(ledger.storage, consentAt);
    const refreshed = settle(
      refresh(grantDeps(refreshing.storage, rotate), enrolment, tokens.refresh_token!),
    );
    const consented = settle(
      recordConsent(grantDeps(consenting.storage, rotate), enrolment.userId, clientId, ['profile']),
    );
    await Promise.race([refreshing.reached, refreshed]);
    await Promise.race([consenting.reached, consented]);
    equal(await storage().clients.remove!(clientId), true, 'clients.remove must resolve true');
    // A new registration under the same id: another createdAt, as registerClient would give it.
    const registeredAgain = () =>
      suite.putClient({ ...enrolment.client, createdAt: enrolment.client.createdAt + 1 });
    if (again === 'during') await registeredAgain();
    refreshing.release();
    consenting.release();
    const [refreshOutcome, consentOutcome] = await Promise.all([refreshed, consented]);
    if (again === 'after') await registeredAgain();

    const working = await ledger.working({ clientId });
    const outcome = (o: Outcome<unknown>) => (o.ok ? 'succeeded' : describeError(o.error));
    equal(
      working.length,
      0,
      `after clients.remove resolved, no token issued to the client may work, even once it is registered again ` +
        `(rotation ${rotate ? 'on' : 'off'}; a refresh paused before its storage call ${refreshAt}: ${outcome(refreshOutcome)}; ` +
        `a consent paused before its storage call ${consentAt}: ${outcome(consentOutcome)}; registered again ${again} them)`,
    );
  }

  suite.part('clientAdmin')(
    'library rules: a client removed while a refresh and a consent are in flight',
    () => {
      for (const rotate of [false, true]) {
        it(`no token of the removed client works, even after it is registered again (rotation ${rotate ? 'on' : 'off'}; paused at each storage call)`, async () => {
          const probe = await enrol(storage(), (client) => suite.putClient(client));
          const probeDeps = grantDeps(storage(), rotate);
          const probeTokens = await exchange(probeDeps, probe, await issue(probeDeps, probe));
          const refreshCalls = await callsOf(storage(), (s) =>
            refresh(grantDeps(s, rotate), probe, probeTokens.refresh_token!),
          );
          const consentCalls = await callsOf(storage(), (s) =>
            recordConsent(grantDeps(s, rotate), probe.userId, probe.client.clientId, ['profile']),
          );
          for (let refreshAt = 1; refreshAt <= refreshCalls; refreshAt++) {
            for (let consentAt = 1; consentAt <= consentCalls; consentAt++) {
              for (const again of ['during', 'after'] as const)
                await once(rotate, refreshAt, consentAt, again);
            }
          }
        });
      }
    },
  );
}
