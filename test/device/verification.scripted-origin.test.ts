/**
 * The code form of the verification page refuses a submission no browser marked as its own, and
 * docs/device-flow.md tells scripted clients which header to send (issue 38): `Origin` with the
 * server's origin, or `Sec-Fetch-Site: same-origin`.
 */
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { registerDeviceClient, requestDeviceCode } from '../support/device.js';
import { parseForm, pathOf } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it('a scripted client gets the code form through with the documented Origin header, and a 403 without it', async () => {
  const docs = readFileSync(new URL('../../docs/device-flow.md', import.meta.url), 'utf8').replace(
    /\s+/g,
    ' ',
  );
  expect(docs).toContain('**Scripted clients**');
  expect(docs).toContain(
    "`Sec-Fetch-Site: same-origin`, or, without that header, an `Origin` header equal to the server's origin",
  );

  t = await createTestApp();
  await registerDeviceClient(t.storage);
  const { user_code: userCode } = (await requestDeviceCode(t, { client_id: 'realm-cli' })).body as {
    user_code: string;
  };
  const form = parseForm((await t.agent.get('/oauth/device')).text);
  const submit = (headers: Record<string, string>) =>
    t!.agent
      .post(pathOf(form.action))
      .type('form')
      .set(headers)
      .send({ ...form.fields, user_code: userCode });
  const unmarked = await submit({});
  expect(unmarked.status).toBe(403);
  expect(unmarked.text).toContain('The code was submitted from another site.');
  expect((await submit({ Origin: 'https://elsewhere.example' })).status).toBe(403);
  expect((await submit({ Origin: new URL(t.baseUrl).origin })).status).toBe(200);
});
