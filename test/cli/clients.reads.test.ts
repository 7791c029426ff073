/**
 * The CLI's commands on one client read it once at most: `clients update` and `rotate-secret`
 * leave the read to updateClient and rotateClientSecret, and `disable`, `enable` and `remove`
 * tell an unknown client by their write's answer. Run in-process on a real SQLite file, with a
 * connect that logs the calls made to the client store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { registerClient } from '../../src/clients/register.js';
import { connectStorage } from '../../src/storage/sql/connect.js';

const dir = mkdtempSync(join(tmpdir(), 'oob-cli-reads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const url = `sqlite:${join(dir, 'oauth.db')}`;

const setup = await connectStorage(url, { migrate: true });
await registerClient(setup, {
  clientId: 'printer',
  applicationName: 'Photo printer',
  redirectUri: 'https://printer.example/cb',
  scopes: ['realms'],
});
await setup.close();

/** Runs one command; resolves what it printed, its error, and the client store calls it made. */
async function cli(...args: string[]) {
  const calls: string[] = [];
  let out = '';
  const connect: typeof connectStorage = async (databaseUrl, options) => {
    const storage = await connectStorage(databaseUrl, options);
    const clients = storage.clients;
    for (const name of ['find', 'update', 'remove'] as const) {
      const method = clients[name]!.bind(clients) as (...a: unknown[]) => Promise<unknown>;
      (clients as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
        calls.push(name);
        return method(...a);
      };
    }
    return storage;
  };
  const program = createProgram({ out: (text) => (out += text), err: () => undefined }, {}, connect);
  const error = await program
    .parseAsync(['node', 'openid-oauth-bridge', '--database-url', url, ...args])
    .then(
      () => null,
      (err: Error) => err.message,
    );
  return { out, error, calls };
}

describe('commands on one client', () => {
  it.each([
    [
      ['clients', 'update', 'printer', '--name', 'Printer 2'],
      ['find', 'update'],
    ],
    [
      ['clients', 'rotate-secret', 'printer'],
      ['find', 'update'],
    ],
    [['clients', 'disable', 'printer'], ['update']],
    [['clients', 'enable', 'printer'], ['update']],
    [['clients', 'show', 'printer'], ['find']],
  ])('%j reads the client once at most', async (args, calls) => {
    const run = await cli(...args);
    expect(run.error).toBeNull();
    expect(run.calls).toEqual(calls);
  });

  it.each([
    [['clients', 'update', 'nobody', '--name', 'X']],
    [['clients', 'rotate-secret', 'nobody']],
    [['clients', 'disable', 'nobody']],
    [['clients', 'enable', 'nobody']],
    [['clients', 'remove', 'nobody']],
    [['clients', 'show', 'nobody']],
  ])('%j refuses an unknown client in the same words', async (args) => {
    const run = await cli(...args);
    expect(run.error).toBe('no client has client_id nobody (see: clients list)');
    expect(run.calls.filter((c) => c === 'find').length).toBeLessThanOrEqual(1);
  });

  it('removes with one call', async () => {
    const run = await cli('clients', 'remove', 'printer');
    expect(run.error).toBeNull();
    expect(run.calls).toEqual(['remove']);
  });
});
