/**
 * `keys retire` never retires the key that signs now (issue 38, item 7): with an older active key
 * still there, retiring the signing key used to succeed and silently make the older key sign
 * again. And its refusals name the keys the right way round. The CLI in process, on a real SQLite
 * file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { connectStorage } from '../../src/index.js';
import { signingRecord } from '../../src/oidc/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-cli-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { OIDC_KEY_SECRET: 'a-key-secret-of-at-least-32-characters!!' };

interface ListedKey {
  kid: string;
  state: string;
  signs: boolean;
}

/** Runs the CLI on `url`; resolves the keys it printed (JSON) or its error. */
async function cli(url: string, ...args: string[]): Promise<{ keys: ListedKey[]; error: string | null }> {
  let out = '';
  const program = createProgram({ out: (text) => (out += text), err: () => undefined }, env);
  const error = await program
    .parseAsync(['node', 'openid-oauth-bridge', '--database-url', url, '--json', ...args])
    .then(
      () => null,
      (err: Error) => err.message,
    );
  return { keys: error === null ? (JSON.parse(out) as ListedKey[]) : [], error };
}

/** A database whose keys were rotated twice: `older` active, `signing` active and signing, `next`. */
async function twiceRotated() {
  const url = `sqlite:${join(dir, `${Date.now()}-${Math.random()}.db`)}`;
  await (await connectStorage(url, { migrate: true })).close();
  const first = await cli(url, 'keys', 'rotate');
  const second = await cli(url, 'keys', 'rotate');
  expect(first.error ?? second.error).toBeNull();
  const older = first.keys.find((key) => key.signs)!.kid;
  const signing = second.keys.find((key) => key.signs)!.kid;
  const next = second.keys.find((key) => key.state === 'next')!.kid;
  expect(second.keys.find((key) => key.kid === older)?.state).toBe('active');
  return { url, older, signing, next };
}

/** The kid that signs, read from the database. */
async function signingKid(url: string): Promise<string | undefined> {
  const storage = await connectStorage(url);
  try {
    return signingRecord(await storage.keys.list())?.kid;
  } finally {
    await storage.close();
  }
}

describe('openid-oauth-bridge keys retire', () => {
  it('refuses the key that signs now while an older one is active, even with --force, naming both and the rotation', async () => {
    const { url, older, signing, next } = await twiceRotated();
    for (const force of [[], ['--force']]) {
      const result = await cli(url, 'keys', 'retire', signing, ...force);
      expect(result.error).toBe(
        `The key ${signing} signs now: retiring it would make the older key ${older} sign again. ` +
          `To stop signing with ${signing}, run keys rotate first (the next key ${next} then signs), then retire ${signing} (with --force if it is compromised).`,
      );
    }
    // Nothing changed: the newer key still signs (was: the older key ${older} signed again).
    expect(await signingKid(url)).toBe(signing);
  });

  it('within two minutes of a rotation, says the new key signs and the older may still be used', async () => {
    const { url, older, signing } = await twiceRotated();
    const result = await cli(url, 'keys', 'retire', older);
    expect(result.error).toMatch(
      new RegExp(
        `^The key ${signing} signs now, but instances that have not read the rotation yet \\(within a minute\\) may still sign with ${older}: ` +
          `retire ${older} in \\d+ s, or now with --force if ${older} is compromised\\.$`,
      ),
    );
    const forced = await cli(url, 'keys', 'retire', older, '--force');
    expect(forced.error).toBeNull();
    expect(forced.keys.find((key) => key.kid === older)?.state).toBe('retired');
    expect(forced.keys.find((key) => key.signs)?.kid).toBe(signing);
  });

  it('after a rotation, the key that signs can be retired: rotating is how another key is made to sign', async () => {
    const { url, signing, next } = await twiceRotated();
    expect((await cli(url, 'keys', 'rotate')).error).toBeNull();
    const retired = await cli(url, 'keys', 'retire', signing, '--force');
    expect(retired.error).toBeNull();
    expect(retired.keys.find((key) => key.signs)?.kid).toBe(next);
  });
});
