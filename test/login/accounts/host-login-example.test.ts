/**
 * examples/host-login.ts, driven as a user would: the app's own passport-openid login first, then
 * a tool's authorization request, which asks only for consent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostLoginApp } from '../../../examples/host-login.js';
import { startDevelopmentProvider } from '../../../src/testing/index.js';
import { redirectParams } from '../../support/app.js';
import { parseForm, pathOf, signInAtProvider } from '../../support/flow.js';

let close: () => Promise<void> = async () => {};
afterEach(() => close());

describe('examples/host-login.ts', () => {
  it('reuses the app login: no second login, consent once, the token names the app account', async () => {
    const provider = await startDevelopmentProvider();
    const http: Server = createServer();
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const publicUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const { app, tool } = await createHostLoginApp(publicUrl, provider.identifier);
    http.on('request', app);
    close = async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await provider.close();
    };
    const browser = supertest.agent(publicUrl);

    // The app's own login, through passport-openid.
    const login = await browser.get('/login').query({ openid_identifier: provider.identifier });
    expect(login.status).toBe(302);
    const back = await browser.get(pathOf(await signInAtProvider(login.headers.location!, 'alice')));
    expect(back.status).toBe(302);
    expect((await browser.get('/')).text).toMatch(/^Signed in as /);

    // A tool asks: the consent page at once, for the app's account.
    const query = {
      response_type: 'code',
      client_id: tool.clientId,
      redirect_uri: 'https://tool.example/callback',
    };
    const consent = await browser.get('/oauth/authorize').query(query);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Stats Tool');
    const form = parseForm(consent.text);
    const done = await browser
      .post(pathOf(form.action))
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send({ ...form.fields, decision: 'allow' });
    expect(done.status).toBe(303);
    const { code } = redirectParams(done.headers.location!);
    const tokens = await browser.post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      client_id: tool.clientId,
      client_secret: tool.clientSecret,
      redirect_uri: 'https://tool.example/callback',
    });
    expect(tokens.status).toBe(200);
    const profile = await supertest(publicUrl)
      .get('/api/profile')
      .set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(profile.body).toEqual({ account: 'user:alice' });

    // Asked once: the next request goes straight back to the tool.
    const again = await browser.get('/oauth/authorize').query(query);
    expect(again.status).toBe(302);
  });
});
