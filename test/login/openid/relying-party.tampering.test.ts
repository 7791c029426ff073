import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../../src/testing/provider/index.js';
import {
  createRelyingParty,
  expectLoginError,
  genuineCallback,
  withParam,
} from '../../support/openid-harness.js';
import { startCanary, type TestServer } from '../../support/openid-servers.js';

let op: RunningDevelopmentProvider;
let canary: TestServer;
beforeAll(async () => {
  op = await startDevelopmentProvider();
  canary = await startCanary();
});
afterAll(async () => {
  await op.close();
  await canary.close();
});
afterEach(() => {
  vi.restoreAllMocks();
  expect(canary.hits(), 'the canary server must never be contacted').toBe(0);
});

/** Verifies a tampered callback and asserts no outbound request at all was made. */
async function expectRefusedLocally(
  mutate: (callback: URL) => URL,
  kind: 'invalid_response' | 'expired' = 'invalid_response',
) {
  const rp = createRelyingParty(op);
  const { callback, state } = await genuineCallback(rp);
  const outbound = vi.spyOn(globalThis, 'fetch');
  await expectLoginError(rp.verify(mutate(callback), state), kind);
  expect(outbound).not.toHaveBeenCalled();
  outbound.mockRestore();
  // Refused before the nonce was consumed: the genuine response still verifies.
  await expect(rp.verify(callback, state)).resolves.toMatchObject({ identifier: op.userUrl('alice') });
}

describe('RelyingParty.verify refuses tampered responses', () => {
  it('refuses a claimed_id and identity switched to another user of the same provider', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp, 'alice');
    const forged = withParam(
      withParam(callback, 'openid.claimed_id', op.userUrl('bob')),
      'openid.identity',
      op.userUrl('bob'),
    );
    await expectLoginError(rp.verify(forged, state), 'invalid_response');
  });

  it('refuses a changed claimed_id alone', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp, 'alice');
    await expectLoginError(
      rp.verify(withParam(callback, 'openid.claimed_id', op.userUrl('mallory')), state),
      'invalid_response',
    );
  });

  it('refuses a changed signature', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    const sig = Buffer.from(callback.searchParams.get('openid.sig')!, 'base64');
    sig[0] = sig[0]! ^ 1;
    await expectLoginError(
      rp.verify(withParam(callback, 'openid.sig', sig.toString('base64')), state),
      'invalid_response',
    );
  });

  it('refuses a claimed identifier at a foreign origin without fetching it', async () => {
    await expectRefusedLocally((cb) =>
      withParam(
        withParam(cb, 'openid.claimed_id', `${canary.url}/user/alice`),
        'openid.identity',
        `${canary.url}/user/alice`,
      ),
    );
  });

  it('refuses an op_endpoint other than the discovered one without contacting it', async () => {
    await expectRefusedLocally((cb) => withParam(cb, 'openid.op_endpoint', `${canary.url}/endpoint`));
  });

  it('refuses a changed return_to', async () => {
    await expectRefusedLocally((cb) => {
      const returnTo = new URL(cb.searchParams.get('openid.return_to')!);
      returnTo.searchParams.set('rp_nonce', 'attacker-chosen');
      return withParam(cb, 'openid.return_to', returnTo.href);
    });
  });

  it('refuses a callback received at another path or without its rp_nonce', async () => {
    await expectRefusedLocally((cb) => {
      const moved = new URL(cb);
      moved.pathname = '/elsewhere';
      return moved;
    });
    await expectRefusedLocally((cb) => withParam(cb, 'rp_nonce', null));
    await expectRefusedLocally((cb) => withParam(cb, 'rp_nonce', 'other'));
  });

  it('refuses a response without openid.ns, or with an OpenID 1.x one', async () => {
    await expectRefusedLocally((cb) => withParam(cb, 'openid.ns', null));
    await expectRefusedLocally((cb) => withParam(cb, 'openid.ns', 'http://openid.net/signon/1.1'));
  });

  it('refuses a response that leaves a required field unsigned', async () => {
    for (const name of [
      'return_to',
      'op_endpoint',
      'response_nonce',
      'assoc_handle',
      'claimed_id',
      'identity',
    ]) {
      await expectRefusedLocally((cb) => {
        const signed = cb.searchParams
          .get('openid.signed')!
          .split(',')
          .filter((f) => f !== name);
        return withParam(cb, 'openid.signed', signed.join(','));
      });
    }
  });

  it('refuses a response that signs a field it does not contain, or lacks a field', async () => {
    await expectRefusedLocally((cb) =>
      withParam(cb, 'openid.signed', `${cb.searchParams.get('openid.signed')},sreg.email`),
    );
    await expectRefusedLocally((cb) => withParam(cb, 'openid.assoc_handle', null));
    await expectRefusedLocally((cb) => withParam(cb, 'openid.identity', null));
  });

  it('refuses a repeated openid.* parameter', async () => {
    await expectRefusedLocally((cb) => {
      const copy = new URL(cb);
      copy.searchParams.append('openid.claimed_id', op.userUrl('bob'));
      return copy;
    });
  });

  it('refuses error, setup_needed and unknown modes', async () => {
    for (const mode of ['error', 'setup_needed', 'checkid_setup', 'id_res2']) {
      await expectRefusedLocally((cb) => withParam(cb, 'openid.mode', mode));
    }
  });

  it('refuses XRI and non-http claimed identifiers', async () => {
    for (const xri of ['=alice', 'xri://=alice', 'mailto:alice@example.test']) {
      await expectRefusedLocally((cb) =>
        withParam(withParam(cb, 'openid.claimed_id', xri), 'openid.identity', xri),
      );
    }
  });

  it('refuses an oversized callback URL or one with too many parameters', async () => {
    await expectRefusedLocally((cb) => withParam(cb, 'padding', 'x'.repeat(20_000)));
    await expectRefusedLocally((cb) => {
      const copy = new URL(cb);
      for (let i = 0; i < 300; i += 1) copy.searchParams.append(`p${i}`, '1');
      return copy;
    });
  });

  it('refuses a response delivered to another login (login CSRF)', async () => {
    const rp = createRelyingParty(op);
    const attacker = await genuineCallback(rp, 'mallory');
    const victim = await rp.begin(rp.findProvider('Development')!);
    const outbound = vi.spyOn(globalThis, 'fetch');
    await expectLoginError(rp.verify(attacker.callback, victim.state), 'invalid_response');
    expect(outbound).not.toHaveBeenCalled();
  });

  it('refuses a malformed or outdated login state without fetching', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    const outbound = vi.spyOn(globalThis, 'fetch');
    await expectLoginError(rp.verify(callback, { ...state, opEndpoint: 'javascript:alert(1)' }), 'expired');
    await expectLoginError(rp.verify(callback, null as never), 'expired');
    await expectLoginError(
      rp.verify(callback, { ...state, startedAt: Date.now() - 60 * 60 * 1000 }),
      'expired',
    );
    expect(outbound).not.toHaveBeenCalled();
  });

  it('ignores unsigned extension fields: the identity carries nothing from them', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp, 'alice');
    const withSreg = withParam(
      withParam(callback, 'openid.ns.sreg', 'http://openid.net/extensions/sreg/1.1'),
      'openid.sreg.email',
      'admin@example.test',
    );
    const identity = await rp.verify(withSreg, state);
    expect(identity).toEqual({
      provider: 'Development',
      identifier: op.userUrl('alice'),
      opEndpoint: op.endpoint,
      accountKey: op.userUrl('alice'),
    });
  });
});
