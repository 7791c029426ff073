/**
 * The consent page says what the `profile` scope releases (issue 38): not only a name, but the
 * picture (a Steam persona and avatar), the profile page and the team memberships (`groups`).
 */
import { afterEach, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { authorizeWithLogin } from '../support/flow.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it('the consent page for profile names the team memberships and the Steam persona and avatar', async () => {
  t = await createTestApp({
    oidc: { keySecret: 'an-oidc-key-secret-of-at-least-32-chars' },
    scopes: { realms: 'See your realms' },
  });
  const consent = await authorizeWithLogin(t, {
    response_type: 'code',
    client_id: t.codeClient.clientId,
    redirect_uri: 'https://client.example/cb',
    scope: 'realms profile',
    state: 's',
  });
  expect(consent.status).toBe(200);
  expect(consent.text).toContain('Do you trust Photo Printer?');
  expect(consent.text).toContain(
    'Your name, nickname and picture (a Steam persona and avatar), your profile page and your team memberships, as your sign-in provider gives them',
  );
});
