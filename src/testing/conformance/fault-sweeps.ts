import assert from 'node:assert/strict';
import { StorageUnavailableError } from '../../errors/storage-unavailable.js';
import type { ServerEvent } from '../../events/types.js';
import { standingGrant, type TokenResponse } from '../../grants/index.js';
import type { Storage } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { withFaults, type FaultTiming, type RecordedCall } from './faults.js';
import {
  describeError,
  enrol,
  exchange,
  grantDeps,
  isInvalidGrant,
  issue,
  refresh,
  replays,
  revoke,
  settle,
  tokenLedger,
  tokensOf,
  works,
  type Enrolment,
  type Outcome,
  type TokenLedger,
} from './flow.js';

/** One request of a sweep, prepared on a fresh enrolment so that runs never meet. */
interface Case {
  enrolment: Enrolment;
  ledger: TokenLedger;
  /** Every event of the request, its failed attempt and its retry. */
  events: ServerEvent[];
  /** Sends the request through `storage`. */
  request(storage: Storage): Promise<unknown>;
  /** What must hold once the request succeeded (the first time or on a retry). */
  done(value: unknown): Promise<void>;
}

/** An operation swept with faults: how to prepare a request, and its commit point. */
interface Operation {
  name: string;
  /** The call that commits it (`ephemeral.replace` of the code), or `null` when every step is reversible. */
  commit: (call: RecordedCall) => boolean;
  /**
   * Whether a write after the commit point must succeed before anything is handed out (a
   * rotation marks the replaced token): its failure fails the request, and the retry is then
   * refused as a reuse that revokes the grant. Fail closed, RFC 9700 4.14.2.
   */
  failsClosedAfterCommit?: boolean;
  prepare(): Promise<Case>;
}

/**
 * For each operation: counts the storage calls N of a clean run, then for each k in 1..N runs it
 * again on fresh data with call k failing, and checks that it failed or succeeded cleanly, that a
 * retry after a failure before the commit point succeeds and is no replay, and that nothing that
 * had succeeded is lost.
 */
export function faultSweepTests(suite: ConformanceSuite): void {
  const { describe, it, storage, putClient } = suite;

  async function noneWork(tokens: readonly string[], guarantee: string) {
    for (const token of tokens)
      assert.ok(!(await works(storage(), token)), `${guarantee}: a token still works`);
  }
  async function allWork(tokens: readonly string[], guarantee: string) {
    for (const token of tokens)
      assert.ok(await works(storage(), token), `${guarantee}: a token does not work`);
  }

  /** A fresh enrolment with a code exchanged, and a bystander grant of the same user at another client. */
  async function exchanged(rotate: boolean) {
    const ledger = tokenLedger(storage());
    const deps = grantDeps(ledger.storage, rotate);
    const enrolment = await enrol(ledger.storage, putClient);
    const tokens = await exchange(deps, enrolment, await issue(deps, enrolment));
    return { ledger, enrolment, tokens };
  }

  const exchangeOp: Operation = {
    name: 'a code exchange',
    commit: (call) => call.method === 'ephemeral.replace',
    async prepare() {
      const ledger = tokenLedger(storage());
      const enrolment = await enrol(ledger.storage, putClient);
      const code = await issue(grantDeps(ledger.storage, false), enrolment);
      const events: ServerEvent[] = [];
      return {
        enrolment,
        ledger,
        events,
        request: (s) => exchange(grantDeps(s, false, events), enrolment, code),
        async done(value) {
          await allWork(
            tokensOf(value as TokenResponse),
            'the tokens of a successful code exchange must work',
          );
        },
      };
    },
  };

  const refreshOp = (rotate: boolean): Operation => ({
    name: `a refresh (rotation ${rotate ? 'on' : 'off'})`,
    commit: (call) => rotate && call.method === 'ephemeral.add',
    failsClosedAfterCommit: rotate,
    async prepare() {
      const { ledger, enrolment, tokens } = await exchanged(rotate);
      const events: ServerEvent[] = [];
      return {
        enrolment,
        ledger,
        events,
        request: (s) => refresh(grantDeps(s, rotate, events), enrolment, tokens.refresh_token!),
        async done(value) {
          const kept = rotate ? [tokens.access_token] : tokensOf(tokens);
          await allWork(
            [...kept, ...tokensOf(value as TokenResponse)],
            'after a successful refresh, its tokens and the earlier ones must work',
          );
        },
      };
    },
  });

  const revokeOp: Operation = {
    name: 'a revocation',
    commit: (call) => call.method === 'grants.save',
    async prepare() {
      const { ledger, enrolment, tokens } = await exchanged(false);
      const bystander = await exchanged(false);
      const events: ServerEvent[] = [];
      return {
        enrolment,
        ledger,
        events,
        request: (s) => revoke(grantDeps(s, false, events), enrolment),
        async done() {
          assert.equal(
            await standingGrant(grantDeps(storage(), false), enrolment.userId, enrolment.client.clientId),
            null,
            'a completed revocation must leave no standing grant',
          );
          await noneWork(tokensOf(tokens), 'a completed revocation');
          assert.deepStrictEqual(
            await ledger.working({ grantId: enrolment.grant.grantId }),
            [],
            'no token of a revoked grant may work',
          );
          await allWork(tokensOf(bystander.tokens), 'a revocation must not touch another grant');
        },
      };
    },
  };

  async function sweep(operation: Operation, timing: FaultTiming): Promise<void> {
    const clean = await operation.prepare();
    const counter = withFaults(clean.ledger.storage);
    await clean.done(await clean.request(counter.storage));
    const calls = counter.calls;
    const commitAt = calls.findIndex(operation.commit) + 1 || Infinity;
    for (let k = 1; k <= calls.length; k++) {
      const c = await operation.prepare();
      const where = `${operation.name} with its storage call ${k} of ${calls.length} (${calls[k - 1]!.method}) failing ${timing} the adapter`;
      const faulty = withFaults(c.ledger.storage).failCall(k, timing);
      const first = await settle(c.request(faulty.storage));
      if (first.ok) {
        await c.done(first.value);
        continue;
      }
      assert.ok(
        StorageUnavailableError.is(first.error),
        `${where} must fail with the storage's error (StorageUnavailableError), got ${describeError(first.error)}`,
      );
      assert.ok(
        k <= commitAt || operation.failsClosedAfterCommit === true,
        `${where}: a failure after the commit point (call ${commitAt}) must not fail the request, or the client's retry would look like a replay`,
      );
      const beforeCommit = k < commitAt || (k === commitAt && timing === 'before');
      const retry: Outcome<unknown> = await settle(c.request(c.ledger.storage));
      if (beforeCommit) {
        assert.ok(
          retry.ok,
          `${where}, then retried: the retry must succeed (the failure came before the commit point); got ${retry.ok ? '' : describeError(retry.error)}`,
        );
        assert.deepStrictEqual(
          replays(c.events).map((event) => event.type),
          [],
          `${where}, then retried: the retry must not be taken for a replay`,
        );
        if (operation !== revokeOp) {
          assert.ok(
            await standingGrant(grantDeps(storage(), false), c.enrolment.userId, c.enrolment.client.clientId),
            `${where}, then retried: the grant must still stand`,
          );
        }
        await c.done((retry as { value: unknown }).value);
      } else {
        // The commit ran but its answer was lost: the retry cannot tell a retry from a replay. It
        // may succeed or be refused; whichever, a revoked grant has no working token.
        assert.ok(
          retry.ok || isInvalidGrant(retry.error),
          `${where}, then retried: expected success or invalid_grant, got ${retry.ok ? '' : describeError(retry.error)}`,
        );
        if (k > commitAt) {
          // Only a write that fails closed fails after the commit: nothing was handed out, and the
          // retry is a reuse.
          assert.ok(
            !retry.ok && isInvalidGrant(retry.error),
            `${where}, then retried: the replaced token must stay replaced (invalid_grant), got ${retry.ok ? 'a success' : describeError(retry.error)}`,
          );
        }
        if (operation === revokeOp) await c.done(retry.ok ? retry.value : undefined);
        const grant = await standingGrant(
          grantDeps(storage(), false),
          c.enrolment.userId,
          c.enrolment.client.clientId,
        );
        if (!grant)
          assert.deepStrictEqual(
            await c.ledger.working({ grantId: c.enrolment.grant.grantId }),
            [],
            `${where}: no token of a revoked grant may work`,
          );
      }
    }
  }

  describe('faults: each storage call of an operation fails in turn', () => {
    for (const timing of ['before', 'after'] as const) {
      for (const operation of [exchangeOp, refreshOp(false), refreshOp(true), revokeOp]) {
        it(`${operation.name}, each call failing ${timing} the adapter: clean failure, retry succeeds and is no replay, nothing lost`, () =>
          sweep(operation, timing));
      }
    }
  });
}
