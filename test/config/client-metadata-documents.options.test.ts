/**
 * The clientMetadataDocuments option is checked when the server is built: its bounds, its
 * patterns, and a storage that can keep the clients it makes.
 */
import { describe, expect, it } from 'vitest';
import {
  createAuthorizationServer,
  memoryStorage,
  type AuthorizationServerOptions,
  type Storage,
} from '../../src/index.js';

const valid = (): AuthorizationServerOptions => ({
  baseUrl: 'https://auth.example.com',
  storage: memoryStorage(),
  providers: [{ name: 'Example ID', identifier: 'https://id.example.com/' }],
  session: { secret: 'a session secret of at least 32 characters' },
});

function messageFor(
  options: AuthorizationServerOptions['clientMetadataDocuments'],
  storage: Storage = memoryStorage(),
) {
  try {
    createAuthorizationServer({ ...valid(), storage, clientMetadataDocuments: options });
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  return expect.fail('the options must be refused');
}

describe('clientMetadataDocuments', () => {
  it('is off by default and on with {}, with its defaults', () => {
    expect(createAuthorizationServer(valid()).options.clientMetadataDocuments).toBeUndefined();
    const on = createAuthorizationServer({ ...valid(), clientMetadataDocuments: {} });
    expect(on.options.clientMetadataDocuments).toEqual({
      maxBytes: 65536,
      timeoutMs: 4000,
      minCacheSeconds: 60,
      maxCacheSeconds: 3600,
      refuseHosts: [],
      allowLoopbackOrigins: [],
      maxFetchesPerMinute: 30,
      ca: [],
    });
  });

  it('refuses a size cap below 16 KiB (5 KiB caps broke real clients)', () => {
    expect(messageFor({ maxBytes: 5 * 1024 })).toContain('clientMetadataDocuments.maxBytes');
  });

  it('refuses a ceiling below the floor', () => {
    expect(messageFor({ minCacheSeconds: 600, maxCacheSeconds: 60 })).toContain(
      'clientMetadataDocuments.maxCacheSeconds: must be at least clientMetadataDocuments.minCacheSeconds',
    );
  });

  it('refuses a loopback origin that is not an https origin, and a host pattern that is not one', () => {
    expect(messageFor({ allowLoopbackOrigins: ['http://localhost:8443'] })).toContain('allowLoopbackOrigins');
    expect(messageFor({ allowLoopbackOrigins: ['https://localhost:8443/'] })).toContain(
      'allowLoopbackOrigins',
    );
    expect(messageFor({ allowHosts: ['https://claude.ai'] })).toContain('allowHosts');
    expect(messageFor({ ca: ['not a certificate'] })).toContain('ca');
  });

  it('needs clients.create and clients.update in the storage', () => {
    const storage: Storage = memoryStorage();
    const { create: _create, ...clients } = storage.clients;
    void _create;
    expect(messageFor({}, { ...storage, clients })).toContain(
      'clientMetadataDocuments: the storage has no clients.create and clients.update',
    );
  });
});
