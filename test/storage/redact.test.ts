import { describe, expect, it } from 'vitest';
import { redactConnectionString } from '../../src/storage/redact.js';

/** Connection strings as logs and errors show them (issue 29, CWE-532): no password, ever. */
describe('redactConnectionString', () => {
  it.each([
    ['postgres://app:hunter2@db:5432/auth', 'postgres://app:***@db:5432/auth'],
    ['postgresql://app:hunter2@db/auth', 'postgresql://app:***@db/auth'],
    [
      'postgres://app@db/auth?password=hunter2&sslmode=require',
      'postgres://app@db/auth?password=***&sslmode=require',
    ],
    [
      'postgres://db/auth?SSLPassword=hunter2&sslkey=/k.pem&sslcert=/c.pem',
      'postgres://db/auth?SSLPassword=***&sslkey=***&sslcert=***',
    ],
    ['postgres://db/auth?p%61ssword=hunter2', 'postgres://db/auth?password=***'],
    ['postgres://db/auth?password=a&password=hunter2', 'postgres://db/auth?password=***'],
    ['postgres://db/auth#hunter2', 'postgres://db/auth'],
    ['sqlite:./data/oauth.db', 'sqlite:./data/oauth.db'],
  ])('%s', (given, shown) => {
    expect(redactConnectionString(given)).toBe(shown);
  });

  it.each([
    'postgres://app:hunter2#x@db/auth',
    'postgres://app:12/hunter2@db/auth',
    'postgres://app:Xy@hunter2/9#q@db/auth',
    'postgres://u:ab@hunter2/ef@host/db',
    'postgres://u:x@hunter2#z@host/db',
    'postgres://u:hunter2@host/db?application_name=a@b',
  ])('an unencoded password that breaks the parse shows only the scheme: %s', (given) => {
    const shown = redactConnectionString(given);
    expect(shown).toBe('postgres://…');
    expect(shown).not.toContain('hunter2');
  });

  it('a string that is not a URL at all says so, and nothing of it', () => {
    expect(redactConnectionString('host=db password=hunter2')).toBe(
      '(a connection string that is not a URL)',
    );
  });
});
