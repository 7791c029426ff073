import { afterAll, expect, it } from 'vitest';
import { startDemo } from '../support/demo-process.js';
import { POSTGRES_URL, dropSchema, postgresAvailability, uniqueSchema } from '../support/databases.js';

/**
 * The demo's startup banner never prints a database password (issue 29): a PostgreSQL URL, which
 * may carry one in its userinfo or as `?password=`, is named by its kind only. On the machine's
 * PostgreSQL (required under CI).
 */
const postgres = await postgresAvailability();
const schema = uniqueSchema('demo_banner');
afterAll(() => (postgres.ok ? dropSchema(schema) : undefined));

it.skipIf(!postgres.ok)(
  `the demo's banner does not show a PostgreSQL URL's password${postgres.ok ? '' : ' (PostgreSQL not running)'}`,
  async () => {
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    // Trust auth ignores the password; the banner must not show it.
    url.searchParams.set('password', 'Banner-s3cret');
    const demo = await startDemo({ DATABASE_URL: url.href });
    try {
      expect(demo.output()).toContain('Database');
      expect(demo.output()).toContain('from DATABASE_URL (not shown');
      expect(demo.output()).not.toContain('Banner-s3cret');
    } finally {
      await demo.stop();
    }
  },
  60_000,
);
