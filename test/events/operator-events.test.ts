/**
 * A host's own code calling the operator's functions with the server (an admin page of its own)
 * reports the changes on `server.events`, as the CLI reports them to its audit file (issue 41):
 * the rule and its event live in one place. Given the storage alone, nothing is reported. No
 * event carries a secret the call resolved.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { registerClient, rotateClientSecret, updateClient, type ServerEvent } from '../../src/index.js';
import { auditTrail } from '../../src/observability/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { recordEvents } from '../support/endpoints.js';

let t: TestApp;
afterEach(() => t?.close());

describe("the operator's functions, called with the server", () => {
  it('report client.added, client.updated and client.secret_rotated, without the secrets', async () => {
    t = await createTestApp();
    const events: ServerEvent[] = recordEvents(t);
    const issued = await registerClient(t.server, {
      clientId: 'admin-made',
      applicationName: 'Admin made',
      redirectUri: 'https://admin.example/cb',
      grantType: 'implicit',
      scopes: ['realms'],
    });
    const updated = await updateClient(t.server, 'admin-made', {
      applicationName: 'Admin made, renamed',
      grantType: 'authorization_code',
    });
    const rotated = await rotateClientSecret(t.server, 'admin-made');

    expect(issued.clientSecret).toBeUndefined();
    expect(updated.clientSecret).toMatch(/.{20}/);
    const base = { at: expect.any(Number) as unknown, clientId: 'admin-made', by: 'operator' };
    expect(events).toEqual([
      {
        ...base,
        type: 'client.added',
        applicationName: 'Admin made',
        grantType: 'implicit',
        public: true,
        scopes: ['realms'],
      },
      {
        ...base,
        type: 'client.updated',
        changed: ['applicationName', 'grantType', 'public'],
        secretIssued: true,
      },
      { ...base, type: 'client.secret_rotated' },
    ]);
    const serialized = JSON.stringify(events);
    for (const secret of [updated.clientSecret!, rotated]) expect(serialized).not.toContain(secret);
  });

  it("reaches the server's audit trail, and reports nothing given the storage alone or for a change that changes nothing", async () => {
    t = await createTestApp();
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const audit = auditTrail(t.server, { stream });
    const events = recordEvents(t);

    await updateClient(t.storage, 'code-client', { applicationName: 'Unreported' });
    await updateClient(t.server, 'code-client', { applicationName: 'Unreported' });
    expect(events).toEqual([]);

    await updateClient(t.server, 'code-client', { requirePkce: true });
    await audit.close();
    expect(events.map((event) => event.type)).toEqual(['client.updated']);
    const line = JSON.parse(text.trim()) as Record<string, unknown>;
    expect(line).toEqual({
      at: expect.any(String) as unknown,
      type: 'client.updated',
      by: 'operator',
      client_id: 'code-client',
      changed: ['requirePkce'],
      secret_issued: false,
    });
  });
});
