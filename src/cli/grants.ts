import type { Command } from 'commander';
import { ServerEvents } from '../events/emitter.js';
import { revokeApplication } from '../grants/grant.js';
import { CliError } from './errors.js';
import { grantJson, table } from './format.js';
import type { Cli } from './cli.js';

/** `grants list|revoke`: the consents users gave, and their revocation. */
export function addGrantCommands(program: Command, { withStorage, migrateOption, print }: Cli): void {
  const grants = program
    .command('grants')
    .description("list and revoke users' trust in applications (their grants)");

  grants
    .command('list')
    .description('list who trusts which application, and since when (reads only)')
    .option('--user <user_id>', "only this user's grants")
    .option('--client <client_id>', "only this client's grants")
    .action((options: { user?: string; client?: string }) =>
      withStorage(false, async (storage) => {
        const grants = await storage.grants.list({
          ...(options.user === undefined ? {} : { userId: options.user }),
          ...(options.client === undefined ? {} : { clientId: options.client }),
        });
        const standing = grants.filter((grant) => grant.revokedAt === null);
        const rows = await Promise.all(standing.map((grant) => grantJson(storage, grant)));
        print(
          rows,
          rows.length === 0
            ? 'No grants.'
            : table(
                ['user_id', 'user_identifier', 'client_id', 'scope', 'authorized_at', 'updated_at'],
                rows.map((r) => [
                  r.user_id,
                  r.user_identifier ?? '',
                  r.client_id,
                  r.scope,
                  r.authorized_at,
                  r.updated_at,
                ]),
              ),
        );
      }),
    );

  grants
    .command('revoke')
    .description(
      "end a user's trust in an application: revokes its grant, with every token and code, at once",
    )
    .requiredOption('--user <user_id>', 'the user')
    .requiredOption('--client <client_id>', 'the client')
    .addOption(migrateOption())
    .action((options: { user: string; client: string; migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        const deps = { storage, clock: Date.now, events: new ServerEvents(() => console) };
        if (!(await revokeApplication(deps, options.user, options.client, 'operator'))) {
          throw new CliError(`user ${options.user} has no grant for client ${options.client}`);
        }
        print(
          { user_id: options.user, client_id: options.client, revoked: true },
          'Revoked: the grant and every token and code issued under it. The next authorization asks for trust again.',
        );
      }),
    );
}
