import { describe, expect, it } from 'vitest';
import { planClaimedIdMerge } from '../../src/login/openid/claimed-id-merge.js';
import type { UserRecord } from '../../src/storage/types.js';

const user = (id: string, identifier: string, createdAt: number, provider = 'Steam'): UserRecord => ({
  id,
  identifier,
  provider,
  createdAt,
});

describe('planClaimedIdMerge', () => {
  it('keeps the row already under the normal form and merges the other spellings into it', () => {
    const rows = [
      user('u1', 'HTTPS://id.example/alice', 1),
      user('u2', 'https://id.example/alice', 2),
      user('u3', 'https://id.example/./%61lice', 3),
    ];
    expect(planClaimedIdMerge(rows)).toEqual([
      {
        provider: 'Steam',
        identifier: 'https://id.example/alice',
        keep: rows[1],
        rename: false,
        merge: [rows[0], rows[2]],
      },
    ]);
  });

  it('renames the oldest row when none holds the normal form, even alone', () => {
    const rows = [user('u2', 'https://id.example:443/bob', 2), user('u1', 'HTTPS://id.example/bob', 1)];
    expect(planClaimedIdMerge(rows)).toEqual([
      {
        provider: 'Steam',
        identifier: 'https://id.example/bob',
        keep: rows[1],
        rename: true,
        merge: [rows[0]],
      },
    ]);
    const alone = user('u9', 'https://ID.example/carol', 9);
    expect(planClaimedIdMerge([alone])).toEqual([
      { provider: 'Steam', identifier: 'https://id.example/carol', keep: alone, rename: true, merge: [] },
    ]);
  });

  it('leaves alone rows already normal, other providers, trailing slashes, fragments and non-URLs', () => {
    const rows = [
      user('a', 'https://id.example/alice', 1),
      user('b', 'https://id.example/alice', 1, 'Launchpad'),
      user('c', 'https://id.example/alice/', 1),
      user('d', 'https://id.example/alice#2', 1),
      user('e', 'not a url', 1),
      user('f', 'not a url', 2),
    ];
    expect(planClaimedIdMerge(rows)).toEqual([]);
  });
});
