import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTIFIER_SELECT, OPENID2_NS } from '../../../src/login/openid/constants.js';
import { parseKeyValueForm } from '../../../src/login/openid/key-value-form.js';
import {
  developmentProvider,
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../../src/testing/provider/index.js';

let op: RunningDevelopmentProvider;
beforeAll(async () => {
  op = await startDevelopmentProvider({ users: ['alice', '<script>'] });
});
afterAll(() => op.close());

const RETURN_TO = 'http://127.0.0.1:3999/cb?rp_nonce=n1';
const setupParams = (overrides: Record<string, string> = {}) => ({
  'openid.ns': OPENID2_NS,
  'openid.mode': 'checkid_setup',
  'openid.claimed_id': IDENTIFIER_SELECT,
  'openid.identity': IDENTIFIER_SELECT,
  'openid.return_to': RETURN_TO,
  'openid.realm': 'http://127.0.0.1:3999/',
  ...overrides,
});

async function signIn(user = 'alice'): Promise<URL> {
  const res = await request(op.url)
    .post('/endpoint')
    .type('form')
    .send({ ...setupParams(), dev_user: user, dev_action: 'signin' });
  expect(res.status).toBe(302);
  return new URL(res.headers.location as string);
}

async function checkAuthentication(assertion: URL): Promise<Map<string, string>> {
  const fields = Object.fromEntries([...assertion.searchParams].filter(([k]) => k.startsWith('openid.')));
  const res = await request(op.url)
    .post('/endpoint')
    .type('form')
    .send({ ...fields, 'openid.mode': 'check_authentication' });
  expect(res.status).toBe(200);
  return parseKeyValueForm(res.text)!;
}

describe('development OpenID provider', () => {
  it('shows a login form with every value escaped', async () => {
    const res = await request(op.url)
      .get('/endpoint')
      .query(setupParams({ 'openid.return_to': `${RETURN_TO}&x="><script>` }));
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).not.toContain('<script>');
    expect(res.text).toContain('&#34;&#62;&#60;script&#62;');
    expect(res.text).toContain('value="signin"');
    expect(res.text).toContain('value="cancel"');
  });

  it('issues a signed positive assertion to return_to, keeping its query', async () => {
    const assertion = await signIn('alice');
    expect(`${assertion.origin}${assertion.pathname}`).toBe('http://127.0.0.1:3999/cb');
    expect(assertion.searchParams.get('rp_nonce')).toBe('n1');
    expect(Object.fromEntries(assertion.searchParams)).toMatchObject({
      'openid.ns': OPENID2_NS,
      'openid.mode': 'id_res',
      'openid.op_endpoint': op.endpoint,
      'openid.claimed_id': op.userUrl('alice'),
      'openid.identity': op.userUrl('alice'),
      'openid.return_to': RETURN_TO,
      'openid.signed': 'op_endpoint,claimed_id,identity,return_to,response_nonce,assoc_handle',
    });
    expect(assertion.searchParams.get('openid.response_nonce')).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\S+$/,
    );
  });

  it('confirms an assertion once through check_authentication, then never again', async () => {
    const assertion = await signIn();
    expect(Object.fromEntries(await checkAuthentication(assertion))).toEqual({
      ns: OPENID2_NS,
      is_valid: 'true',
    });
    expect((await checkAuthentication(assertion)).get('is_valid')).toBe('false');
  });

  it('does not confirm a tampered assertion, nor burn its nonce doing so', async () => {
    const assertion = await signIn('alice');
    const forged = new URL(assertion);
    forged.searchParams.set('openid.claimed_id', op.userUrl('bob'));
    expect((await checkAuthentication(forged)).get('is_valid')).toBe('false');
    const unsignedNonce = new URL(assertion);
    unsignedNonce.searchParams.set('openid.signed', 'op_endpoint,claimed_id,identity,return_to,assoc_handle');
    expect((await checkAuthentication(unsignedNonce)).get('is_valid')).toBe('false');
    expect((await checkAuthentication(assertion)).get('is_valid')).toBe('true');
  });

  it('refuses invalid user names and a return_to outside the realm', async () => {
    for (const user of ['', '..', 'a b', 'x'.repeat(65), '<b>']) {
      const res = await request(op.url)
        .post('/endpoint')
        .type('form')
        .send({ ...setupParams(), dev_user: user, dev_action: 'signin' });
      expect(res.status, user).toBe(400);
    }
    for (const realm of [
      'http://127.0.0.1:3998/',
      'http://localhost:3999/',
      'https://127.0.0.1:3999/',
      'http://127.0.0.1:3999/c',
    ]) {
      const res = await request(op.url)
        .get('/endpoint')
        .query(setupParams({ 'openid.realm': realm }));
      expect(res.status, realm).toBe(400);
    }
  });

  it('answers cancel, setup_needed, a refused association and direct errors', async () => {
    const cancel = await request(op.url)
      .post('/endpoint')
      .type('form')
      .send({ ...setupParams(), dev_action: 'cancel' });
    expect(new URL(cancel.headers.location as string).searchParams.get('openid.mode')).toBe('cancel');
    const immediate = await request(op.url)
      .get('/endpoint')
      .query(setupParams({ 'openid.mode': 'checkid_immediate' }));
    expect(new URL(immediate.headers.location as string).searchParams.get('openid.mode')).toBe(
      'setup_needed',
    );
    const associate = await request(op.url)
      .post('/endpoint')
      .type('form')
      .send({ 'openid.ns': OPENID2_NS, 'openid.mode': 'associate' });
    expect(associate.status).toBe(400);
    expect(parseKeyValueForm(associate.text)?.get('error_code')).toBe('unsupported-type');
    const unknown = await request(op.url).post('/endpoint').type('form').send({ 'openid.mode': 'nonsense' });
    expect(parseKeyValueForm(unknown.text)?.get('error')).toBeTruthy();
    const duplicate = await request(op.url).get(
      `/endpoint?openid.mode=checkid_setup&openid.mode=checkid_setup`,
    );
    expect(duplicate.status).toBe(400);
  });

  it('locks the user when a specific claimed identifier is requested', async () => {
    const requested = setupParams({
      'openid.claimed_id': op.userUrl('bob'),
      'openid.identity': op.userUrl('bob'),
    });
    const form = await request(op.url).get('/endpoint').query(requested);
    expect(form.text).toMatch(/name="dev_user"[^>]*value="bob"[^>]*readonly/);
    const other = await request(op.url)
      .post('/endpoint')
      .type('form')
      .send({ ...requested, dev_user: 'alice', dev_action: 'signin' });
    expect(other.status).toBe(400);
  });

  it('serves its OP identifier as XRDS or HTML, and can be mounted under a path', async () => {
    const app = express();
    app.use('/op', developmentProvider({ baseUrl: 'http://127.0.0.1:4000/op' }));
    const xrds = await request(app).get('/op/').set('accept', 'application/xrds+xml');
    expect(xrds.headers['content-type']).toMatch(/^application\/xrds\+xml/);
    expect(xrds.text).toContain('<URI>http://127.0.0.1:4000/op/endpoint</URI>');
    const html = await request(app).get('/op/').set('accept', 'text/html');
    expect(html.headers['x-xrds-location']).toBe('http://127.0.0.1:4000/op/?format=xrds');
    expect(html.text).toContain('<link rel="openid2.provider" href="http://127.0.0.1:4000/op/endpoint">');
    expect(() => developmentProvider({ baseUrl: 'ftp://x/' })).toThrow(TypeError);
  });
});
