import type { Command } from 'commander';
import { ServerEvents } from '../events/emitter.js';
import { revokeApplication } from '../grants/grant.js';
import { normalizeIdentifier } from '../login/openid/normalize-identifier.js';
import type { Storage } from '../storage/types.js';
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
    .requiredOption(
      '--user <user>',
      "the user: its user_id (a host account's id, with the accounts hook), or the identifier it logged in with (its claimed id)",
    )
    .requiredOption('--client <client_id>', 'the client')
    .addOption(migrateOption())
    .action((options: { user: string; client: string; migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        const deps = { storage, clock: Date.now, events: new ServerEvents(() => console) };
        const userId = await userOfGrant(storage, options.user, options.client);
        if (userId === undefined || !(await revokeApplication(deps, userId, options.client, 'operator'))) {
          throw new CliError(`user ${options.user} has no grant for client ${options.client}`);
        }
        print(
          { user_id: userId, client_id: options.client, revoked: true },
          'Revoked: the grant and every token and code issued under it. The next authorization asks for trust again.',
        );
      }),
    );
}

/**
 * The user id of the standing grant for `clientId` whose user is `given`: a user id, or the
 * identifier the user logged in with (as `grants list` shows it, normalised as at login).
 */
async function userOfGrant(storage: Storage, given: string, clientId: string): Promise<string | undefined> {
  const standing = (await storage.grants.list({ clientId })).filter((grant) => grant.revokedAt === null);
  if (standing.some((grant) => grant.userId === given)) return given;
  const identifier = normalizeIdentifier(given) ?? given;
  const matching: string[] = [];
  for (const grant of standing) {
    const user = await storage.users.find?.(grant.userId);
    if (user?.identifier === identifier) matching.push(grant.userId);
  }
  // One identifier in two namespaces (two host strategies' providers) is two people: say so.
  if (matching.length > 1) {
    throw new CliError(
      `${matching.length} users logged in as ${given} have a grant for client ${clientId}: name one by its user_id (${matching.join(', ')})`,
    );
  }
  return matching[0];
}
