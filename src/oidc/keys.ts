import { hkdfSync, type webcrypto } from 'node:crypto';
import { CompactEncrypt, compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { randomId } from '../crypto/secrets.js';
import { emit, type EventTarget } from '../events/emit.js';
import type { KeyStore, SigningKeyRecord, Storage } from '../storage/types.js';

/** How long an instance keeps the keys it read before reading them again. */
export const KEY_REFRESH_MS = 60_000;

/** The algorithms a signing key may have: asymmetric only, so a public key can never verify an HMAC. */
export const SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/**
 * A JSON Web Key (RFC 7517) as the library hands it around: its own type, so that the public
 * declarations do not import `jose` (an ES module a CommonJS app's types could not `require`).
 */
export interface Jwk {
  kty?: string;
  kid?: string;
  alg?: string;
  [member: string]: unknown;
}

/** The key that signs now. */
export interface Signer {
  kid: string;
  alg: SigningAlgorithm;
  key: webcrypto.CryptoKey;
}

/** The published keys and the one that signs, as one instance last read them. */
export interface KeySet {
  signer: Signer;
  /** Public JWKs of the keys that are published (next and active), each with `kid`, `alg`, `use`. */
  published: Jwk[];
}

/**
 * Where the signing keys come from: the storage (sealed with a key derived from `keySecret`,
 * shared by every instance, rotated with the CLI), or the host (`keys`, fixed until a restart).
 */
export type KeySource =
  | { kind: 'stored'; store: KeyStore; keySecret: string; algorithm: SigningAlgorithm }
  | { kind: 'host'; keys: readonly Jwk[] };

/**
 * The 256-bit key that seals private JWKs at rest, derived from the configured secret with HKDF
 * (RFC 5869, SHA-256): the secret itself never touches a key.
 */
function sealingKey(keySecret: string): Uint8Array {
  return new Uint8Array(
    hkdfSync('sha256', keySecret, 'openid-oauth-bridge', 'id token signing keys at rest', 32),
  );
}

/** A private JWK sealed as a compact JWE (`dir`, `A256GCM`), bound to its `kid`. */
async function seal(privateJwk: JWK, kid: string, keySecret: string): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(privateJwk)))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid })
    .encrypt(sealingKey(keySecret));
}

/** The private JWK of a stored key; throws if the secret is not the one it was sealed with. */
async function unseal(record: SigningKeyRecord, keySecret: string): Promise<JWK> {
  let plaintext: Uint8Array;
  let kid: unknown;
  try {
    const opened = await compactDecrypt(record.sealedPrivateJwk, sealingKey(keySecret));
    plaintext = opened.plaintext;
    kid = opened.protectedHeader.kid;
  } catch (err) {
    throw new KeySecretError(record.kid, err);
  }
  if (kid !== record.kid)
    throw new Error(`openid-oauth-bridge: signing key ${record.kid} was sealed as ${String(kid)}`);
  return JSON.parse(new TextDecoder().decode(plaintext)) as JWK;
}

/** A new key pair, its public part as a JWK and its private part sealed. */
export async function newSigningKey(
  alg: SigningAlgorithm,
  keySecret: string,
  state: 'next' | 'active',
  now: number,
): Promise<SigningKeyRecord> {
  const kid = randomId();
  const pair = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
  });
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' };
  const privateJwk = await exportJWK(pair.privateKey);
  return {
    kid,
    alg,
    state,
    publicJwk: JSON.stringify(publicJwk),
    sealedPrivateJwk: await seal(privateJwk, kid, keySecret),
    createdAt: now,
    activatedAt: state === 'active' ? now : null,
    retiredAt: null,
  };
}

/** The key that signs: of the active keys, the one activated last. */
export function signingRecord(records: readonly SigningKeyRecord[]): SigningKeyRecord | undefined {
  return records
    .filter((record) => record.state === 'active')
    .sort((a, b) => (a.activatedAt ?? 0) - (b.activatedAt ?? 0) || a.kid.localeCompare(b.kid))
    .at(-1);
}

/** The public JWKs of the published keys (next and active). */
function publishedOf(records: readonly SigningKeyRecord[]): Jwk[] {
  return records
    .filter((record) => record.state !== 'retired')
    .map((record) => JSON.parse(record.publicJwk) as Jwk);
}

/**
 * Makes a rotation, or the first keys: the `next` key becomes the signing one and a new `next`
 * is made; with no key at all, an active key and a next one. The key that signed so far stays
 * active (published, tokens verifying) until it is retired. Resolves the keys after the change;
 * reports `signing_key.rotated` to `events`, if given (the CLI's: its audit file).
 */
export async function rotateKeys(
  store: KeyStore,
  keySecret: string,
  /** The new key's algorithm; default the algorithm of the key that signs now (else RS256). */
  alg: SigningAlgorithm | undefined,
  now: number,
  events?: EventTarget,
): Promise<SigningKeyRecord[]> {
  const records = await store.list();
  await checkSecretOpens(records, keySecret);
  const algorithm = alg ?? signingRecord(records)?.alg ?? 'RS256';
  const next = records.find((record) => record.state === 'next');
  // The rotated key signs from now on, even when the one that signed so far was activated in the
  // same millisecond (the latest activation signs; a tie would be settled by the kids' order).
  const activatedAt = Math.max(now, (signingRecord(records)?.activatedAt ?? -1) + 1);
  // The next key is saved as active first: were the second save lost, a key would still sign,
  // and the next rotation (or the first request that finds no next key) makes a new one.
  const signing = next
    ? { ...next, state: 'active' as const, activatedAt }
    : await newSigningKey(algorithm, keySecret, 'active', activatedAt);
  await store.save(signing);
  const upcoming = await newSigningKey(algorithm, keySecret, 'next', activatedAt + 1);
  await store.save(upcoming);
  const previous = signingRecord(records)?.kid;
  if (events) {
    emit(events, {
      type: 'signing_key.rotated',
      kid: signing.kid,
      alg: signing.alg,
      ...(previous === undefined ? {} : { previousKid: previous }),
      nextKid: upcoming.kid,
      by: 'operator',
    });
  }
  return store.list();
}

/**
 * Refuses a secret that does not open the stored keys, before anything is written with it: keys
 * sealed with another secret would be unusable to every instance configured with the right one.
 */
async function checkSecretOpens(records: readonly SigningKeyRecord[], keySecret: string): Promise<void> {
  const stored = records.find((record) => record.state !== 'retired');
  if (stored) await unseal(stored, keySecret);
}

/**
 * How long after a rotation the key that signed before it may be retired: every instance must
 * have read the keys again (a minute) and stopped signing with it first.
 */
export const RETIRE_AFTER_ROTATION_MS = 2 * KEY_REFRESH_MS;

/**
 * Retires a key: it leaves the JWKS, and tokens it signed stop verifying. The key that signs now
 * is always refused, `force` or not: retiring it would silently make an older active key sign
 * again, so another key is made the signing key first, explicitly, by a rotation. An older active
 * key is refused for two minutes after the rotation, while instances may still sign with it; so
 * is an unknown or retired `kid`. Reports `signing_key.retired` to `events`, if given.
 */
export async function retireKey(
  store: KeyStore,
  kid: string,
  now: number,
  /** Retire even an older key that instances may still sign with (a compromised key, say). */
  force = false,
  events?: EventTarget,
): Promise<SigningKeyRecord> {
  const records = await store.list();
  const record = records.find((candidate) => candidate.kid === kid);
  if (!record) throw new KeyError(`No signing key has the kid ${kid}.`);
  if (record.state === 'retired') throw new KeyError(`The key ${kid} is already retired.`);
  const signing = signingRecord(records);
  if (signing?.kid === kid) throw new KeyError(signingKeyRefusal(records, signing));
  if (
    record.state === 'active' &&
    signing &&
    !force &&
    now - (signing.activatedAt ?? 0) < RETIRE_AFTER_ROTATION_MS
  ) {
    const wait = Math.ceil((RETIRE_AFTER_ROTATION_MS - (now - (signing.activatedAt ?? 0))) / 1000);
    throw new KeyError(
      `The key ${signing.kid} signs now, but instances that have not read the rotation yet (within a minute) may still sign with ${kid}: ` +
        `retire ${kid} in ${wait} s, or now with --force if ${kid} is compromised.`,
    );
  }
  const retired = { ...record, state: 'retired' as const, retiredAt: now };
  await store.save(retired);
  if (events)
    emit(events, { type: 'signing_key.retired', kid, alg: record.alg, forced: force, by: 'operator' });
  return retired;
}

/** Why the key that signs now cannot be retired, and the rotation that would free it. */
function signingKeyRefusal(records: readonly SigningKeyRecord[], signing: SigningKeyRecord): string {
  const kid = signing.kid;
  const next = records.find((record) => record.state === 'next');
  const rotate = next
    ? `run keys rotate first (the next key ${next.kid} then signs), then retire ${kid}`
    : `run keys rotate first (a new key then signs), then retire ${kid}`;
  const older = records.filter((record) => record.state === 'active' && record.kid !== kid);
  if (older.length === 0) return `The key ${kid} is the only one that signs: ${rotate}.`;
  const fallback = signingRecord(older)!.kid;
  return (
    `The key ${kid} signs now: retiring it would make the older key ${fallback} sign again. ` +
    `To stop signing with ${kid}, ${rotate} (with --force if it is compromised).`
  );
}

/**
 * A stored signing key that the configured `oidc.keySecret` does not open: the secret differs from
 * the one the keys were sealed with. Nothing can be signed until the secret is fixed.
 */
export class KeySecretError extends Error {
  override name = 'KeySecretError';
  constructor(
    readonly kid: string,
    cause: unknown,
  ) {
    super(`openid-oauth-bridge: signing key ${kid} cannot be opened with oidc.keySecret (was it changed?)`, {
      cause,
    });
  }
}

/** A key operation refused (unknown kid, retiring the only signing key). */
export class KeyError extends Error {
  override name = 'KeyError';
}

/**
 * How long an instance goes on with keys it could not read again (the storage down) before it
 * refuses to sign: a retired key must not sign on for long.
 */
export const KEY_STALE_LIMIT_MS = 5 * KEY_REFRESH_MS;

/**
 * The keys of one server: read from the source at most once per {@link KEY_REFRESH_MS} (a
 * rotation reaches every instance within that time), the first keys made when the storage has
 * none. A failed refresh keeps the keys already read; the first read's failure is the caller's.
 */
export function keyRing(
  source: KeySource,
  storage: Storage,
  clock: () => number,
  /** Told each time reading the keys again failed and the keys read before are used. */
  onStale: (error: unknown) => void = () => undefined,
  /** Told of the keys this instance made (the first ones, or a missing next key), once saved. */
  onMade: (made: SigningKeyRecord[]) => void = () => undefined,
) {
  let current: { set: KeySet; readAt: number } | undefined;
  let loading: Promise<KeySet> | undefined;

  async function load(): Promise<KeySet> {
    if (source.kind === 'host') return hostKeySet(source.keys);
    let records = await source.store.list();
    await checkSecretOpens(records, source.keySecret);
    if (!signingRecord(records) || !records.some((record) => record.state === 'next')) {
      records = await bootstrap(source, storage, clock, records, onMade);
    }
    const record = signingRecord(records)!;
    const privateJwk = await unseal(record, source.keySecret);
    const key = (await importJWK(privateJwk, record.alg)) as webcrypto.CryptoKey;
    return { signer: { kid: record.kid, alg: record.alg, key }, published: publishedOf(records) };
  }

  return {
    /** The keys, read again once they are older than {@link KEY_REFRESH_MS}. */
    async current(): Promise<KeySet> {
      const now = clock();
      if (current && now - current.readAt < KEY_REFRESH_MS) return current.set;
      loading ??= load().finally(() => {
        loading = undefined;
      });
      try {
        const set = await loading;
        current = { set, readAt: now };
        return set;
      } catch (err) {
        if (!current || now - current.readAt >= KEY_STALE_LIMIT_MS) throw err;
        onStale(err);
        return current.set;
      }
    },
  };
}

/**
 * The first keys, or a missing next key, made by one instance: the one that wins an ephemeral
 * `add`; the others read again until it has saved them.
 */
async function bootstrap(
  source: Extract<KeySource, { kind: 'stored' }>,
  storage: Storage,
  clock: () => number,
  records: SigningKeyRecord[],
  onMade: (made: SigningKeyRecord[]) => void,
): Promise<SigningKeyRecord[]> {
  const now = clock();
  if (await storage.ephemeral.add('oidc-keys:making', '1', now + 30_000, now)) {
    let after: SigningKeyRecord[];
    if (!signingRecord(records)) {
      after = await rotateKeys(source.store, source.keySecret, source.algorithm, now);
    } else {
      await source.store.save(await newSigningKey(source.algorithm, source.keySecret, 'next', now));
      after = await source.store.list();
    }
    const before = new Set(records.map((record) => record.kid));
    onMade(after.filter((record) => !before.has(record.kid)));
    return after;
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await source.store.list();
    if (signingRecord(again)) return again;
  }
  throw new Error('openid-oauth-bridge: no signing key was made in time by the instance making them');
}

/** The host's keys: the first signs, all are published (public parts only). */
async function hostKeySet(keys: readonly Jwk[]): Promise<KeySet> {
  const [first] = keys;
  if (!first) throw new Error('openid-oauth-bridge: oidc.keys is empty');
  const alg = first.alg as SigningAlgorithm;
  const key = (await importJWK(first as JWK, alg)) as webcrypto.CryptoKey;
  const published = keys.map(publicPart);
  return { signer: { kid: first.kid!, alg, key }, published };
}

/** The public members of an RSA or EC JWK, with `kid`, `alg` and `use`. */
export function publicPart(jwk: Jwk): Jwk {
  const { kty, crv, n, e, x, y, kid, alg } = jwk;
  const members = kty === 'RSA' ? { kty, n, e } : { kty, crv, x, y };
  return { ...members, kid, alg, use: 'sig' };
}

/** A private RSA (RS256) or P-256 (ES256) JWK with a `kid`: never a symmetric key. */
export function isPrivateSigningJwk(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const jwk = value as Jwk;
  const kidOk = typeof jwk.kid === 'string' && jwk.kid.length > 0 && jwk.kid.length <= 255;
  // RS256 needs a modulus of 2048 bits at least: 342 base64url characters.
  const shapeOk =
    (jwk.alg === 'RS256' && jwk.kty === 'RSA' && typeof jwk.n === 'string' && jwk.n.length >= 342) ||
    (jwk.alg === 'ES256' && jwk.kty === 'EC' && jwk.crv === 'P-256');
  return kidOk && shapeOk && typeof jwk.d === 'string' && jwk.d.length > 0;
}
