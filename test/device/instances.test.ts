/**
 * The device flow across two app instances, each its own process, durable state in PostgreSQL and
 * the ephemeral state (device and user codes, the answer, the polling pace, login sessions) in
 * Redis: started on one instance, the code typed and approved on the other (the login finishing on
 * the first), polled on either. The test plays the load balancer.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { startDevelopmentProvider, type RunningDevelopmentProvider } from '../../src/testing/index.js';
import { Browser, firstForm, firstLink, signInAtDevelopmentProvider } from '../support/browser.js';
import {
  REDIS_URL,
  dropSchema,
  postgresAvailability,
  postgresUrlFor,
  redisAvailability,
  uniqueSchema,
} from '../support/databases.js';
import { DEVICE_GRANT, registerDeviceClient } from '../support/device.js';
import { startInstance, type Instance } from '../support/instances.js';

const postgres = await postgresAvailability();
const redis = await redisAvailability();
const missing = [postgres, redis].flatMap((a) => (a.ok ? [] : [a.reason]));
const BASE_URL = 'http://127.0.0.1:1'; // The "load balancer": never contacted, only named.

describe.skipIf(missing.length > 0)(
  `the device flow on two instances (PostgreSQL + Redis)${missing.length ? ` (NOT TESTED: ${missing.join('; ')})` : ''}`,
  () => {
    const schema = uniqueSchema('device_instances');
    const databaseUrl = postgresUrlFor(schema);
    let op: RunningDevelopmentProvider;
    let storage: SqlStorage;
    let a: Instance;
    let b: Instance;

    beforeAll(async () => {
      op = await startDevelopmentProvider();
      storage = await connectStorage(databaseUrl, { migrate: true });
      await registerDeviceClient(storage);
      const config = {
        databaseUrl,
        baseUrl: BASE_URL,
        providers: [{ name: 'Development provider', identifier: op.identifier }],
        sessionSecret: 'one secret shared by every instance, long enough',
        env: { INSTANCE_REDIS_URL: REDIS_URL, INSTANCE_REDIS_PREFIX: `device-${randomUUID()}:` },
      };
      [a, b] = await Promise.all([startInstance(config), startInstance(config)]);
    }, 60_000);

    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await storage?.close();
      await op?.close();
      await dropSchema(schema);
    });

    // As a browser posts a page's form: with its Origin.
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE_URL },
      body: new URLSearchParams(fields),
    });
    const poll = (instance: Instance, deviceCode: string) =>
      fetch(
        `${instance.origin}/oauth/token`,
        form({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: 'realm-cli' }),
      );
    /** The error of a poll's answer. */
    const pollError = async (instance: Instance, deviceCode: string) =>
      ((await (await poll(instance, deviceCode)).json()) as { error?: string }).error;

    it('started on one, approved on the other, polled on either', async () => {
      const started = await fetch(`${a.origin}/oauth/device_authorization`, form({ client_id: 'realm-cli' }));
      expect(started.status).toBe(200);
      const device = (await started.json()) as { device_code: string; user_code: string };
      expect(await pollError(b, device.device_code)).toBe('authorization_pending');
      // The pace is shared too: polling the other instance at once is too fast.
      expect(await pollError(a, device.device_code)).toBe('slow_down');

      const browser = new Browser(BASE_URL);
      const entry = await browser.request(b.origin, '/oauth/device');
      const entryForm = firstForm(await entry.text())!;
      const typed = await browser.request(b.origin, entryForm.action, {
        ...form({ ...entryForm.fields, user_code: device.user_code.toLowerCase() }),
      });
      expect(typed.status).toBe(200);
      const login = await browser.request(a.origin, firstLink(await typed.text())!);
      expect(login.status).toBe(302);
      const callback = await signInAtDevelopmentProvider(login.headers.get('location')!, 'alice');
      const resumed = await browser.request(a.origin, callback);
      expect(resumed.status).toBe(303);
      const consent = await browser.request(b.origin, resumed.headers.get('location')!);
      const consentHtml = await consent.text();
      expect(consentHtml).toContain(device.user_code);
      const decision = firstForm(consentHtml)!;
      const done = await browser.request(
        a.origin,
        decision.action,
        form({ ...decision.fields, decision: 'allow' }),
      );
      expect(await done.text()).toContain('Device connected');

      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const tokens = await poll(a, device.device_code);
      expect(tokens.status).toBe(200);
      const { access_token } = (await tokens.json()) as { access_token: string };
      const api = await fetch(`${b.origin}/v1/realms`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(api.status).toBe(200);
      expect(await pollError(b, device.device_code)).toBe('invalid_grant');
    }, 30_000);
  },
);
