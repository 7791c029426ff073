import type { SessionStore } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull } from './check.js';
import { HOUR, MINUTE, freshHash } from './fixtures.js';

/** The adapter's `sessions`, or a failure that says how to declare it absent. */
export function sessionsOf(suite: ConformanceSuite): SessionStore {
  const sessions = suite.storage().sessions;
  if (!sessions) {
    throw new Error(
      'storage.sessions is missing. It is optional: if your adapter does not implement it, pass ' +
        "absent: ['sessions'] to describeStorageConformance so that its tests are reported as skipped.",
    );
  }
  return sessions;
}

const json = (user: string) => JSON.stringify({ cookie: { path: '/' }, login: { user } });

/** `sessions` (optional): the library's login sessions, expiring at `now`. */
export function sessionTests(suite: ConformanceSuite, register: ConformanceSuite['describe']): void {
  const { it } = suite;
  register('sessions (optional)', () => {
    it('get: an unknown sid gives null', async () => {
      isNull(
        await sessionsOf(suite).get(freshHash(), Date.now()),
        'sessions.get must resolve null for an unknown sid',
      );
    });

    it('set then get: the JSON comes back unchanged until it expires', async () => {
      const now = Date.now();
      const [sid, expiresAt] = [freshHash(), now + HOUR];
      await sessionsOf(suite).set(sid, json('alice'), expiresAt);
      equal(
        await sessionsOf(suite).get(sid, now),
        json('alice'),
        'sessions.get must return the JSON given to sessions.set',
      );
      equal(
        await sessionsOf(suite).get(sid, expiresAt - 1),
        json('alice'),
        'sessions.get must return the session while `now` is before its expiresAt',
      );
      isNull(
        await sessionsOf(suite).get(sid, expiresAt + 1),
        'sessions.get must resolve null for a session expired at the `now` passed in (compare with `now`, ' +
          'not with your own clock)',
      );
    });

    it('set: replaces the JSON and the expiry of an existing session', async () => {
      const now = Date.now();
      const sid = freshHash();
      await sessionsOf(suite).set(sid, json('alice'), now + HOUR);
      await sessionsOf(suite).set(sid, json('bob'), now + MINUTE);
      equal(
        await sessionsOf(suite).get(sid, now),
        json('bob'),
        'sessions.set must replace the JSON of an existing session',
      );
      isNull(
        await sessionsOf(suite).get(sid, now + 2 * MINUTE),
        'sessions.set must replace the expiry of an existing session, even with an earlier one',
      );
    });

    it('touch: extends the expiry, and does not create a session', async () => {
      const now = Date.now();
      const sid = freshHash();
      await sessionsOf(suite).set(sid, json('alice'), now + MINUTE);
      await sessionsOf(suite).touch(sid, now + HOUR);
      equal(
        await sessionsOf(suite).get(sid, now + 2 * MINUTE),
        json('alice'),
        'sessions.touch must extend the expiry and keep the JSON',
      );
      const unknown = freshHash();
      await sessionsOf(suite).touch(unknown, now + HOUR);
      isNull(
        await sessionsOf(suite).get(unknown, now),
        'sessions.touch of an unknown sid must not create a session',
      );
    });

    it('destroy: deletes the session and no other', async () => {
      const now = Date.now();
      const [sid, other] = [freshHash(), freshHash()];
      await sessionsOf(suite).set(sid, json('alice'), now + HOUR);
      await sessionsOf(suite).set(other, json('bob'), now + HOUR);
      await sessionsOf(suite).destroy(sid);
      isNull(await sessionsOf(suite).get(sid, now), 'sessions.get must resolve null after sessions.destroy');
      equal(
        await sessionsOf(suite).get(other, now),
        json('bob'),
        'sessions.destroy must delete only its own session',
      );
      await sessionsOf(suite).destroy(freshHash()); // an unknown sid is not an error
    });
  });
}
