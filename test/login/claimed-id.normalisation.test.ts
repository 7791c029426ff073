/**
 * Issue 18, finding 5: one identity spelled two ways (`HTTP://`, `/./`, `%61`, `:80`) is one
 * user. Normalised as OpenID 2.0 section 7.2 and RFC 3986 section 6 say; a trailing slash and a
 * fragment (section 11.5.1) still tell identities apart.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { normalizeIdentifier } from '../../src/login/openid/normalize-identifier.js';
import type { UserRecord } from '../../src/storage/types.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { deliverCallback, pathOf } from '../support/flow.js';
import { loginCallback } from '../support/python-flow.js';
import {
  pythonOpenIdAvailability,
  startPythonProvider,
  type PythonProvider,
} from '../support/python-openid.js';

describe('normalizeIdentifier', () => {
  it.each([
    ['HTTP://Example.COM/id', 'http://example.com/id'],
    ['https://example.com:443/id', 'https://example.com/id'],
    ['http://example.com:80/id', 'http://example.com/id'],
    ['http://example.com', 'http://example.com/'],
    ['http://example.com/a/./b/../id', 'http://example.com/a/id'],
    ['http://example.com/a/%2E%2e/id', 'http://example.com/id'],
    ['http://example.com/%7Euser/%61lice', 'http://example.com/~user/alice'],
    ['http://example.com/a%2fb%3a', 'http://example.com/a%2Fb%3A'],
    ['http://example.com/id?X=%7e%2f', 'http://example.com/id?X=~%2F'],
    ['http://%45xample.com/id', 'http://example.com/id'],
    ['http://example.com/id#%61', 'http://example.com/id#a'],
  ])('%s is %s', (input, normal) => {
    expect(normalizeIdentifier(input)).toBe(normal);
  });

  it.each([
    ['a trailing slash', 'http://example.com/id', 'http://example.com/id/'],
    ['a fragment (section 11.5.1)', 'http://example.com/id', 'http://example.com/id#2'],
    ['two fragments', 'http://example.com/id#1', 'http://example.com/id#2'],
    ['path case', 'http://example.com/ID', 'http://example.com/id'],
    ['an encoded slash', 'http://example.com/a/b', 'http://example.com/a%2Fb'],
    ['an empty query', 'http://example.com/id', 'http://example.com/id?'],
    ['the scheme', 'http://example.com/id', 'https://example.com/id'],
    ['a port that is not the default', 'http://example.com/id', 'http://example.com:8080/id'],
  ])('keeps %s apart', (_what, a, b) => {
    expect(normalizeIdentifier(a)).not.toBe(normalizeIdentifier(b));
  });

  it('refuses what is not an http(s) URL without credentials', () => {
    for (const value of ['=alice', 'xri://=alice', 'ftp://example.com/', 'http://u:p@example.com/', 'alice'])
      expect(normalizeIdentifier(value)).toBeNull();
  });

  it('is idempotent, and equal for every spelling of one URL fast-check makes up', () => {
    const spell = fc
      .tuple(
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
      )
      .map(([url, upper, dot, encode]) => {
        const u = new URL(url);
        const scheme = u.protocol.slice(0, -1);
        const path = encode
          ? u.pathname.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)
          : u.pathname;
        const other = `${upper ? scheme.toUpperCase() : scheme}://${upper ? u.host.toUpperCase() : u.host}${
          dot ? '/./x/..' : ''
        }${path}${u.href.slice(u.origin.length + u.pathname.length)}`;
        return { url, other };
      });
    fc.assert(
      fc.property(spell, ({ url, other }) => {
        const normal = normalizeIdentifier(url);
        if (normal === null) return;
        expect(normalizeIdentifier(normal)).toBe(normal);
        expect(normalizeIdentifier(other)).toBe(normal);
      }),
    );
  });
});

const python = pythonOpenIdAvailability();
const suite = python.ok ? describe : describe.skip;
const missing = python.ok ? '' : ` [NOT RUN: ${python.reason}]`;

suite(`login: the verified claimed id is normalised before it names a user${missing}`, () => {
  let op: PythonProvider;
  let t: TestApp;
  let users: UserRecord[];
  beforeAll(async () => {
    op = await startPythonProvider();
  });
  afterAll(() => op?.close());
  beforeEach(async () => {
    t = await createTestApp({ providers: [{ name: 'Python OP', identifier: op.identifier }] });
    users = [];
    const findOrCreate = t.storage.users.findOrCreate.bind(t.storage.users);
    t.storage.users.findOrCreate = async (...args) => {
      const user = await findOrCreate(...args);
      users.push(user);
      return user;
    };
  });
  afterEach(() => t.close());

  /** A login in a new browser at which the provider asserts `claimedId`; resolves the user. */
  async function loginAs(claimedId: string): Promise<UserRecord> {
    // The OP-local identifier has no fragment; the claimed id may (section 11.5.1).
    await op.configure({ claimedId, identity: claimedId.split('#')[0] });
    const browser = (await import('supertest')).default.agent(t.baseUrl);
    const callback = await loginCallback(t, browser, 'Python OP');
    expect(callback.searchParams.get('openid.claimed_id')).toBe(claimedId);
    const res = await deliverCallback(browser, pathOf(callback.href));
    expect(res.status, res.text).toBe(200);
    return users.at(-1)!;
  }

  it('logs every spelling of one identity in as one user, known by the normal form', async () => {
    const alice = op.userUrl('alice');
    const { host } = new URL(alice);
    const first = await loginAs(alice);
    expect(first.identifier).toBe(alice);
    for (const spelling of [
      alice.replace('http://', 'HTTP://'),
      alice.replace('/user/', '/user/./'),
      alice.replace('/user/', '/x/../user/'),
      alice.replace('/alice', '/%61lice'),
      `http://${host}/user/alice`.replace('/user', '/%75ser'),
    ]) {
      const again = await loginAs(spelling);
      expect(again, spelling).toEqual(first);
    }
  });

  it('keeps a trailing slash and a fragment apart (other identities)', async () => {
    const alice = op.userUrl('alice');
    const plain = await loginAs(alice);
    const recycled = await loginAs(`${alice}#2`);
    expect(recycled.identifier).toBe(`${alice}#2`);
    expect(recycled.id).not.toBe(plain.id);
    const slash = await loginAs(`${alice}/`);
    expect(slash.identifier).toBe(`${alice}/`);
    expect(new Set([plain.id, recycled.id, slash.id]).size).toBe(3);
  });
});
