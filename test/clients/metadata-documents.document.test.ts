/**
 * What a client metadata document must say, its client_id's form, its cache lifetime, and the
 * redirect rule of document clients: the rules on their own, without a server.
 */
import { describe, expect, it } from 'vitest';
import {
  documentClientIdProblem,
  documentLifetime,
  parseClientMetadataDocument,
} from '../../src/clients/documents/document.js';
import { listedRedirectUriMatches } from '../../src/rules/redirect-uri.js';
import { clientDocument } from '../support/document-server.js';

const URL_ID = 'https://desk.example/oauth/client.json';
const parse = (doc: unknown) => () => parseClientMetadataDocument(URL_ID, JSON.stringify(doc));

describe('parseClientMetadataDocument', () => {
  it('reads a document, ignoring unknown fields and grant types', () => {
    const doc = parseClientMetadataDocument(
      URL_ID,
      JSON.stringify(
        clientDocument(URL_ID, {
          grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:jwt-bearer'],
          software_statement: 'x',
        }),
      ),
    );
    expect(doc).toMatchObject({
      clientId: URL_ID,
      clientName: 'Agent Desk',
      grantTypes: ['authorization_code', 'urn:ietf:params:oauth:grant-type:jwt-bearer'],
    });
    expect(doc.raw.software_statement).toBe('x');
  });

  it('defaults grant_types to authorization_code, and requires it when listed', () => {
    const without = clientDocument(URL_ID);
    delete without.grant_types;
    expect(parse(without)().grantTypes).toEqual(['authorization_code']);
    expect(parse(clientDocument(URL_ID, { grant_types: ['client_credentials'] }))).toThrow(
      /authorization_code/,
    );
  });

  it('refuses a client_id that is not the URL exactly', () => {
    for (const id of [`${URL_ID}/`, URL_ID.replace('json', 'jsom'), URL_ID.toUpperCase(), `${URL_ID}?`]) {
      expect(parse(clientDocument(id)), id).toThrow(/client_id/);
    }
  });

  it('refuses secrets and shared-secret methods; understands the plural list', () => {
    expect(parse(clientDocument(URL_ID, { client_secret: '' }))).toThrow(/client_secret/);
    expect(parse(clientDocument(URL_ID, { token_endpoint_auth_method: 'private_key_jwt' }))).toThrow(/none/);
    const plural = clientDocument(URL_ID, {
      token_endpoint_auth_methods_supported: ['client_secret_post', 'none'],
    });
    delete plural.token_endpoint_auth_method;
    expect(parse(plural)().clientName).toBe('Agent Desk');
    expect(parse({ ...plural, token_endpoint_auth_methods_supported: ['client_secret_post'] })).toThrow(
      /none/,
    );
  });

  it('refuses a document without a name or redirect URIs, with bad ones, or not an object', () => {
    expect(parse(clientDocument(URL_ID, { client_name: '  ' }))).toThrow(/client_name/);
    expect(parse(clientDocument(URL_ID, { redirect_uris: 'http://localhost/cb' }))).toThrow(/redirect_uris/);
    expect(parse(clientDocument(URL_ID, { redirect_uris: ['https://a.example/cb#f'] }))).toThrow(/fragment/);
    expect(parse(clientDocument(URL_ID, { redirect_uris: ['http://a.example/cb'] }))).toThrow(/https/);
    expect(parse([1, 2])).toThrow();
    expect(() => parseClientMetadataDocument(URL_ID, '{')).toThrow(/not JSON/);
  });
});

describe('documentClientIdProblem', () => {
  it('accepts an https URL with a path in canonical form', () => {
    expect(documentClientIdProblem(URL_ID)).toBeNull();
    expect(documentClientIdProblem('https://desk.example/client')).toBeNull();
  });

  it('refuses others, saying why', () => {
    expect(documentClientIdProblem('https://desk.example/')).toMatch(/path/);
    expect(documentClientIdProblem('https://desk.example')).toMatch(/path/);
    expect(documentClientIdProblem('http://desk.example/c.json')).toMatch(/https/);
    expect(documentClientIdProblem('https://u:p@desk.example/c.json')).toMatch(/userinfo/);
    expect(documentClientIdProblem('https://desk.example/c.json#x')).toMatch(/fragment/);
    expect(documentClientIdProblem('https://desk.example/a/../c.json')).toMatch(/dot/);
    expect(documentClientIdProblem('https://desk.example/a/%2e%2e/c.json')).toMatch(/dot/);
    expect(documentClientIdProblem('https://DESK.example/c.json')).toMatch(/canonical/);
    expect(documentClientIdProblem('https://desk.example:443/c.json')).toMatch(/canonical/);
  });
});

describe('documentLifetime', () => {
  it('honours max-age between the floor and the ceiling; no-store and nothing are the floor', () => {
    expect(documentLifetime('public, max-age=600', 60, 3600)).toBe(600);
    expect(documentLifetime('max-age=86400', 60, 3600)).toBe(3600);
    expect(documentLifetime('max-age=5', 60, 3600)).toBe(60);
    expect(documentLifetime('no-store', 60, 3600)).toBe(60);
    expect(documentLifetime('max-age=600, no-cache', 60, 3600)).toBe(60);
    expect(documentLifetime(undefined, 60, 3600)).toBe(60);
    expect(documentLifetime('max-age=abc', 0, 3600)).toBe(0);
  });
});

describe('listedRedirectUriMatches', () => {
  const listed = [
    'http://localhost/callback',
    'http://[::1]/cb',
    'https://desk.example/cb',
    'com.desk.app:/oauth',
  ];

  it('matches exactly, and a portless loopback URI on any port of the same host', () => {
    for (const uri of [
      'http://localhost/callback',
      'http://localhost:8080/callback',
      'http://[::1]:9/cb',
      'https://desk.example/cb',
      'com.desk.app:/oauth',
    ]) {
      expect(listedRedirectUriMatches(listed, uri), uri).toBe(true);
    }
  });

  it('nothing else: other host, scheme, path, query, port spelling', () => {
    for (const uri of [
      'http://127.0.0.1:8080/callback',
      'http://localhost:8080/callback?x=1',
      'http://localhost:8080/callback/',
      'http://localhost:80/callback',
      'http://localhost:0080/callback',
      'https://localhost:8080/callback',
      'http://localhost.evil.example:8080/callback',
      'http://localhost:8080@evil.example/callback',
      'https://desk.example/cb/x',
      'https://desk.example/cb?x=1',
      'com.desk.app:/oauth/x',
    ]) {
      expect(listedRedirectUriMatches(listed, uri), uri).toBe(false);
    }
    // A listed URI with a port keeps it.
    expect(listedRedirectUriMatches(['http://localhost:3000/cb'], 'http://localhost:3001/cb')).toBe(false);
  });
});
