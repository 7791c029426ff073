import { hashSecret } from '../../crypto/secrets.js';
import { ephemeralKeys } from '../../storage/keys.js';
import type { ConformanceSuite } from './api.js';
import { recordConsent } from '../../grants/index.js';
import { exchange, grantDeps, refresh, revoke } from './flow.js';
import { checkNow } from './race-invariants.js';
import { newRequest, start, type Cmd } from './race-world.js';

/*
 * The commands of the race model. Each starts a request in the background (its storage calls
 * then wait for the scheduler) and checks the invariants; `step` lets the scheduler release a
 * few calls. A `faultAt` of k > 0 makes the request's k-th storage call fail; it is retried.
 */

const faultNote = (faultAt: number) => (faultAt ? `, call ${faultAt} fails` : '');

/** Exchanges one of the two codes of the target. */
export function exchangeCmd(code: number, faultAt: number): Cmd {
  return {
    check: () => true,
    async run(_model, w) {
      const plaintext = w.codes[code]!;
      const commitKey = ephemeralKeys.code(hashSecret(plaintext));
      const request = newRequest(w, { kind: 'exchange', subject: `code ${code}`, commitKey, faultAt });
      start(w, request, (s, events) => exchange(grantDeps(s, w.rotate, events), w.target, plaintext), true);
      await checkNow(w);
    },
    toString: () => `exchange(code ${code}${faultNote(faultAt)})`,
  };
}

/** Refreshes with the first refresh token of the target, or the latest one handed out. */
export function refreshCmd(latest: boolean, faultAt: number): Cmd {
  return {
    check: () => true,
    async run(_model, w) {
      const index = latest ? w.refreshTokens.length - 1 : 0;
      const token = w.refreshTokens[index]!;
      const commitKey = w.rotate ? ephemeralKeys.rotated(hashSecret(token)) : null;
      const request = newRequest(w, {
        kind: 'refresh',
        subject: `refresh token R${index}`,
        commitKey,
        faultAt,
      });
      start(
        w,
        request,
        async (s, events) => {
          const answer = await refresh(grantDeps(s, w.rotate, events), w.target, token);
          const next = answer.refresh_token;
          if (next !== undefined && !w.refreshTokens.includes(next)) w.refreshTokens.push(next);
          return answer;
        },
        true,
      );
      await checkNow(w);
    },
    toString: () => `refresh(${latest ? 'latest' : 'first'} token${faultNote(faultAt)})`,
  };
}

/** Revokes the target's grant, as the operator or the applications page does. */
export function revokeCmd(faultAt: number): Cmd {
  return {
    check: (model) => model.revokes < 2,
    async run(model, w) {
      model.revokes++;
      const request = newRequest(w, {
        kind: 'revoke',
        subject: 'the target grant',
        commitKey: null,
        faultAt,
      });
      start(w, request, (s, events) => revoke(grantDeps(s, w.rotate, events), w.target), true);
      await checkNow(w);
    },
    toString: () => `revoke(${faultNote(faultAt).slice(2)})`,
  };
}

/** Disables or removes the client (removal only with the operator methods). */
export function clientCmd(suite: ConformanceSuite, kind: 'disable' | 'remove'): Cmd {
  return {
    check: (model) => model.clientChanges < 1 && (kind === 'disable' || suite.has('clientAdmin')),
    async run(model, w) {
      model.clientChanges++;
      model.removed = kind === 'remove';
      const request = newRequest(w, { kind, subject: 'the client', commitKey: null, faultAt: 0 });
      const clientId = w.target.client.clientId;
      start(
        w,
        request,
        async (s) => {
          if (kind === 'remove') return s.clients.remove!(clientId);
          if (suite.has('clientAdmin')) return s.clients.update!(clientId, { disabled: true });
          await w.s.schedule(Promise.resolve(), `#${request.id} disable (putClient)`);
          return suite.putClient({ ...w.target.client, disabled: true }, true);
        },
        false,
      );
      await checkNow(w);
    },
    toString: () => `${kind}Client()`,
  };
}

/**
 * The target user consents again, as the consent page's "allow" does (a wider request, say).
 * Without injected faults: a consent that fails between its save and its check, while the client
 * is removed and registered again under its id, leaves the old grant standing for the new
 * registration (a known limit: only a save conditional on the client's existence would close it).
 */
export function consentCmd(): Cmd {
  return {
    check: (model) => model.consents < 2,
    async run(model, w) {
      model.consents++;
      const request = newRequest(w, {
        kind: 'consent',
        subject: 'the target grant',
        commitKey: null,
        faultAt: 0,
      });
      start(
        w,
        request,
        (s, events) =>
          recordConsent(grantDeps(s, w.rotate, events), w.target.userId, w.target.client.clientId, [
            'profile',
          ]),
        true,
      );
      await checkNow(w);
    },
    toString: () => 'consent()',
  };
}

/**
 * Registers the client again under its id once its removal has resolved, as an operator who
 * removes and adds it back: a new registration, which starts with no grant.
 */
export function registerAgainCmd(): Cmd {
  return {
    check: (model) => model.removed && !model.registeredAgain,
    async run(model, w) {
      model.registeredAgain = true;
      const removal = w.requests.find((r) => r.kind === 'remove')!;
      const request = newRequest(w, { kind: 'register', subject: 'the client', commitKey: null, faultAt: 0 });
      const client = w.target.client;
      start(
        w,
        request,
        async (s) => {
          await removal.settled;
          return s.clients.create!({ ...client, createdAt: client.createdAt + 1 });
        },
        false,
      );
      await checkNow(w);
    },
    toString: () => 'registerClientAgain()',
  };
}

/** Releases up to `tasks` scheduled storage calls, in an order the scheduler picks. */
export function stepCmd(tasks: number): Cmd {
  return {
    check: () => true,
    async run(_model, w) {
      const ready = w.s.count();
      if (ready > 0) await w.s.waitNext(Math.min(tasks, ready));
      await checkNow(w);
    },
    toString: () => `step(${tasks})`,
  };
}
