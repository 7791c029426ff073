import assert from 'node:assert/strict';
import { hashSecret } from '../../crypto/secrets.js';
import type { ServerEvent } from '../../events/types.js';
import { recordConsent, standingGrant } from '../../grants/index.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, race } from './check.js';
import {
  describeError,
  enrol,
  exchange,
  grantDeps,
  isInvalidGrant,
  issue,
  refresh,
  revoke,
  settle,
  tokenLedger,
  tokensOf,
  works,
} from './flow.js';
import { instrumentStorage } from './instrument.js';

/** How many exchanges of one code race. */
const EXCHANGERS = 10;

/** The library's rules (src/grants) over the adapter: what makes a replay, a revocation, a rotation. */
export function ruleTests(suite: ConformanceSuite): void {
  const { describe, it, storage, putClient } = suite;

  async function expectAllWork(tokens: readonly string[], guarantee: string): Promise<void> {
    for (const token of tokens)
      assert.ok(await works(storage(), token), `${guarantee}: a token does not work`);
  }
  async function expectNoneWork(tokens: readonly string[], guarantee: string): Promise<void> {
    for (const token of tokens)
      assert.ok(!(await works(storage(), token)), `${guarantee}: a token still works`);
  }
  async function expectRefused(promise: Promise<unknown>, guarantee: string): Promise<void> {
    const outcome = await settle(promise);
    assert.ok(!outcome.ok, `${guarantee}: it succeeded`);
    assert.ok(
      isInvalidGrant(outcome.error),
      `${guarantee}: expected invalid_grant, got ${describeError(outcome.error)}`,
    );
  }
  const types = (events: readonly ServerEvent[]) => events.map((event) => event.type);

  /** A fresh enrolment with a code exchanged: its tokens, the deps and their event log. */
  async function exchanged(rotate: boolean) {
    const events: ServerEvent[] = [];
    const deps = grantDeps(storage(), rotate, events);
    const enrolment = await enrol(storage(), putClient);
    const tokens = await exchange(deps, enrolment, await issue(deps, enrolment));
    return { deps, events, enrolment, tokens };
  }

  describe('library rules over the adapter: codes', () => {
    it('a code is exchanged once for an access and a refresh token that work', async () => {
      const { tokens, enrolment } = await exchanged(false);
      assert.ok(tokens.refresh_token, 'a code exchange must return a refresh token');
      await expectAllWork(tokensOf(tokens), 'the tokens of a code exchange must work');
      assert.ok(
        await standingGrant(grantDeps(storage(), false), enrolment.userId, enrolment.client.clientId),
        'the grant must stand',
      );
    });

    it('a code presented again is a replay: refused, the grant revoked, its tokens stop working', async () => {
      const { deps, events, enrolment, tokens } = await exchanged(false);
      const code = await issue(deps, enrolment);
      const second = await exchange(deps, enrolment, code);
      await expectRefused(exchange(deps, enrolment, code), 'a code exchanged a second time must be refused');
      assert.ok(
        types(events).includes('code.replayed'),
        `a replayed code must be reported (events: ${types(events).join(', ')})`,
      );
      isNull(
        await standingGrant(deps, enrolment.userId, enrolment.client.clientId),
        'a replayed code must revoke its grant',
      );
      await expectNoneWork(
        [...tokensOf(tokens), ...tokensOf(second)],
        'a replayed code must revoke every token of its grant',
      );
    });

    it('a used code presented by another client is refused and revokes nothing (RFC 6749 4.1.3)', async () => {
      const { deps, events, enrolment } = await exchanged(false);
      const code = await issue(deps, enrolment);
      const tokens = await exchange(deps, enrolment, code);
      const other = await enrol(storage(), putClient);
      await expectRefused(
        exchange(deps, { ...enrolment, client: other.client }, code),
        'another client presenting a used code must be refused',
      );
      assert.ok(
        !types(events).includes('code.replayed'),
        `another client's used code must not be taken for a replay (events: ${types(events).join(', ')})`,
      );
      await expectAllWork(
        tokensOf(tokens),
        'another client presenting a used code must not revoke the grant',
      );
    });

    it(`${EXCHANGERS} concurrent exchanges of one code: exactly one succeeds, the others are refused`, async () => {
      const { deps, enrolment } = await exchanged(false);
      const code = await issue(deps, enrolment);
      const outcomes = await race('exchangeCode', EXCHANGERS, () => settle(exchange(deps, enrolment, code)));
      equal(
        outcomes.filter((outcome) => outcome.ok).length,
        1,
        'exactly one of concurrent exchanges of one code must succeed (ephemeral.take hands the code to one caller)',
      );
      for (const outcome of outcomes) {
        if (!outcome.ok)
          assert.ok(
            isInvalidGrant(outcome.error),
            `a losing exchange must be invalid_grant, got ${describeError(outcome.error)}`,
          );
      }
    });

    it('a code issued before a revocation is refused, even after a new consent', async () => {
      const { deps, enrolment } = await exchanged(false);
      const [code, later] = [await issue(deps, enrolment), await issue(deps, enrolment)];
      equal(await revoke(deps, enrolment), true, 'revokeApplication must resolve true for a standing grant');
      await expectRefused(
        exchange(deps, enrolment, code),
        'a code issued before a revocation must be refused',
      );
      const { grant: renewed } = await recordConsent(deps, enrolment.userId, enrolment.client.clientId, [
        'realms:read',
      ]);
      assert.notEqual(
        renewed.grantId,
        enrolment.grant.grantId,
        'a consent after a revocation must start a new grant',
      );
      await expectRefused(
        exchange(deps, enrolment, later),
        'a code issued before a revocation must be refused after a new consent too (it names the revoked grant)',
      );
    });
  });

  describe('library rules over the adapter: refresh', () => {
    it('without rotation: a new access token; the refresh token stays and keeps working', async () => {
      const { deps, enrolment, tokens } = await exchanged(false);
      const first = await refresh(deps, enrolment, tokens.refresh_token!);
      equal(
        first.refresh_token,
        tokens.refresh_token,
        'without rotation, refresh must return the same refresh token',
      );
      const second = await refresh(deps, enrolment, tokens.refresh_token!);
      await expectAllWork(
        [...tokensOf(tokens), first.access_token, second.access_token],
        'refresh without rotation',
      );
    });

    it('with rotation: a new refresh token replaces the presented one, which is marked rotated', async () => {
      const { deps, events, enrolment, tokens } = await exchanged(true);
      const first = await refresh(deps, enrolment, tokens.refresh_token!);
      assert.ok(
        first.refresh_token && first.refresh_token !== tokens.refresh_token,
        'with rotation, refresh must return a new refresh token',
      );
      const second = await refresh(deps, enrolment, first.refresh_token);
      await expectAllWork(
        [tokens.access_token, first.access_token, second.access_token, second.refresh_token!],
        'refresh with rotation',
      );
      const old = await storage().tokens.find(hashSecret(tokens.refresh_token!));
      assert.ok(
        old && old.token.rotatedAt !== null,
        'a refresh token replaced by rotation must be saved with rotatedAt',
      );
      equal(types(events).includes('refresh_token.reused'), false, 'no reuse happened');
    });

    it('with rotation: a replaced refresh token presented again revokes the grant', async () => {
      const { deps, events, enrolment, tokens } = await exchanged(true);
      const next = await refresh(deps, enrolment, tokens.refresh_token!);
      await expectRefused(
        refresh(deps, enrolment, tokens.refresh_token!),
        'a replaced refresh token must be refused',
      );
      assert.ok(
        types(events).includes('refresh_token.reused'),
        'the reuse of a replaced refresh token must be reported',
      );
      await expectNoneWork(
        [...tokensOf(tokens), ...tokensOf(next)],
        'the reuse of a replaced refresh token must revoke the grant',
      );
      await expectRefused(
        refresh(deps, enrolment, next.refresh_token!),
        'the replacement of a reused refresh token must be refused',
      );
    });

    it(`with rotation: ${EXCHANGERS} concurrent refreshes with one token: exactly one succeeds, the grant is revoked`, async () => {
      const { deps, events, enrolment, tokens } = await exchanged(true);
      const outcomes = await race('refreshAccessToken', EXCHANGERS, () =>
        settle(refresh(deps, enrolment, tokens.refresh_token!)),
      );
      const wins = outcomes.filter((outcome) => outcome.ok);
      equal(
        wins.length,
        1,
        'exactly one of concurrent rotations of one refresh token must succeed (ephemeral.add)',
      );
      assert.ok(
        types(events).includes('refresh_token.reused'),
        'the losers of a rotation race must report a reuse',
      );
      await expectNoneWork(
        [...tokensOf(tokens), ...wins.flatMap((win) => (win.ok ? tokensOf(win.value) : []))],
        'concurrent use of one refresh token under rotation must revoke the grant',
      );
    });

    for (const rotate of [false, true]) {
      it(`a revocation while a refresh is in flight leaves no token of the grant working (rotation ${rotate ? 'on' : 'off'}; paused at each storage call)`, async () => {
        // How many storage calls a refresh makes, on a clean run.
        const probe = await exchanged(rotate);
        let calls = 0;
        const counted = instrumentStorage(storage(), (_call, run) => (calls++, run()));
        await refresh(grantDeps(counted, rotate), probe.enrolment, probe.tokens.refresh_token!);
        for (let pauseAt = 1; pauseAt <= calls; pauseAt++) {
          const { enrolment, tokens } = await exchanged(rotate);
          const ledger = tokenLedger(storage());
          let n = 0;
          let release!: () => void;
          let reached!: () => void;
          const gate = new Promise<void>((resolve) => (release = resolve));
          const atGate = new Promise<void>((resolve) => (reached = resolve));
          const paused = instrumentStorage(ledger.storage, async (_call, run) => {
            if (++n === pauseAt) {
              reached();
              await gate;
            }
            return run();
          });
          const flight = settle(refresh(grantDeps(paused, rotate), enrolment, tokens.refresh_token!));
          await Promise.race([atGate, flight]);
          equal(
            await revoke(grantDeps(storage(), rotate), enrolment),
            true,
            'revokeApplication must resolve true',
          );
          release();
          const outcome = await flight;
          const minted = outcome.ok ? tokensOf(outcome.value) : [];
          await expectNoneWork(
            [...tokensOf(tokens), ...minted],
            `a refresh paused before its storage call ${pauseAt} of ${calls} while the grant was revoked, then resumed (${outcome.ok ? 'it succeeded' : describeError(outcome.error)})`,
          );
          const working = await ledger.working({ grantId: enrolment.grant.grantId });
          equal(
            working.length,
            0,
            `no token the paused refresh saved may work after the revocation (paused before call ${pauseAt})`,
          );
        }
      });
    }
  });

  describe('library rules over the adapter: revocation and clients', () => {
    it('revokeApplication: every token of the grant stops working; a new consent does not bring them back', async () => {
      const { deps, enrolment, tokens } = await exchanged(false);
      const bystander = await exchanged(false);
      const refreshed = await refresh(deps, enrolment, tokens.refresh_token!);
      equal(await revoke(deps, enrolment), true, 'revokeApplication must resolve true for a standing grant');
      equal(
        await revoke(deps, enrolment),
        false,
        'revokeApplication must resolve false when no grant stands',
      );
      await expectNoneWork([...tokensOf(tokens), refreshed.access_token], 'a revoked grant');
      await expectRefused(
        refresh(deps, enrolment, tokens.refresh_token!),
        'the refresh token of a revoked grant must be refused',
      );
      await recordConsent(deps, enrolment.userId, enrolment.client.clientId, ['realms:read']);
      await expectNoneWork(
        tokensOf(tokens),
        'a new consent after a revocation must not bring back the old tokens',
      );
      await expectAllWork(
        tokensOf(bystander.tokens),
        "another user's grant must be untouched by the revocation",
      );
    });

    it("a disabled client's tokens stop working, and work again once it is enabled", async () => {
      const { deps, enrolment, tokens } = await exchanged(false);
      await suite.putClient({ ...enrolment.client, disabled: true }, true);
      await expectNoneWork(tokensOf(tokens), 'the tokens of a disabled client');
      await expectRefused(
        refresh(deps, enrolment, tokens.refresh_token!),
        'a refresh for a disabled client must be refused',
      );
      await suite.putClient({ ...enrolment.client, disabled: false }, true);
      await expectAllWork(tokensOf(tokens), 'the tokens of a client enabled again');
    });

    suite.part('clientAdmin')('library rules: a removed client', () => {
      it("a removed client's tokens stop working", async () => {
        const { deps, enrolment, tokens } = await exchanged(false);
        equal(
          await storage().clients.remove!(enrolment.client.clientId),
          true,
          'clients.remove must resolve true',
        );
        await expectNoneWork(tokensOf(tokens), 'the tokens of a removed client');
        await expectRefused(
          refresh(deps, enrolment, tokens.refresh_token!),
          'a refresh for a removed client must be refused',
        );
      });
    });
  });
}
