import type { Command } from 'commander';
import { revokeApplication } from '../grants/grant.js';
import { normalizeIdentifier } from '../login/openid/normalize-identifier.js';
import type { GrantRecord, Storage } from '../storage/types.js';
import { CliError } from './errors.js';
import { grantJson, table } from './format.js';
import type { Cli } from './cli.js';

/** What `--user` takes, in both commands. */
const USER_HELP =
  "the user: its user_id (a host account's id, with the accounts hook), or the identifier it logged in with (its claimed id), as grants list shows them";

/** `grants list|revoke`: the consents users gave, and their revocation. */
export function addGrantCommands(
  program: Command,
  { withStorage, events, migrateOption, print, confirm }: Cli,
): void {
  const grants = program
    .command('grants')
    .description("list and revoke users' trust in applications (their grants)");

  grants
    .command('list')
    .description('list who trusts which application, and since when (reads only); filters are optional')
    .option('--user <user>', `only this user's grants: ${USER_HELP}`)
    .option('--client <client_id>', "only this client's grants")
    .action((options: { user?: string; client?: string }) =>
      withStorage(false, async (storage) => {
        const standing =
          options.user === undefined
            ? await standingGrants(storage, options.client)
            : (await grantsOfUser(storage, options.user, options.client)).grants;
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
      "end a user's trust in an application, or in every application: revokes the grant, with every token and code issued under it, at once. Needs --user; with --client, that one grant; without, every grant of the user (asks first in a terminal; elsewhere needs --yes)",
    )
    .requiredOption('--user <user>', `required: ${USER_HELP}`)
    .option(
      '--client <client_id>',
      'the client whose grant to revoke (default: every client the user trusts)',
    )
    .option(
      '--yes',
      'revoke every grant of the user without asking (needed without --client, outside a terminal)',
    )
    .addOption(migrateOption())
    .action((options: { user: string; client?: string; yes?: boolean; migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        const deps = { storage, ...events };
        const { userId, grants } = await grantsOfUser(storage, options.user, options.client);
        if (userId === undefined || grants.length === 0) {
          throw new CliError(
            options.client === undefined
              ? `user ${options.user} has no grants (see: grants list)`
              : `user ${options.user} has no grant for client ${options.client}`,
          );
        }
        const clientIds = grants.map((grant) => grant.clientId);
        if (options.client === undefined && options.yes !== true) {
          const question = `Revoke every grant of user ${userId} (${clientIds.length}: ${clientIds.join(', ')}), with their tokens and codes?`;
          if (confirm === undefined) {
            throw new CliError(
              `revoking every grant of user ${userId} (${clientIds.join(', ')}) needs --yes, or --client to revoke one; nothing was changed`,
            );
          }
          if (!(await confirm(question))) throw new CliError('not confirmed; nothing was changed');
        }
        const revoked: string[] = [];
        for (const clientId of clientIds) {
          if (await revokeApplication(deps, userId, clientId, 'operator')) revoked.push(clientId);
        }
        if (revoked.length === 0) {
          throw new CliError(
            `user ${options.user} has no grant for client ${options.client ?? clientIds[0]}`,
          );
        }
        print(
          options.client === undefined
            ? { user_id: userId, client_ids: revoked, revoked: true }
            : { user_id: userId, client_id: options.client, revoked: true },
          options.client === undefined
            ? `Revoked: ${revoked.length} grant${revoked.length === 1 ? '' : 's'} (${revoked.join(', ')}) and every token and code issued under them. The next authorization asks for trust again.`
            : 'Revoked: the grant and every token and code issued under it. The next authorization asks for trust again.',
        );
      }),
    );
}

/** The grants not revoked, of one client or of all. */
async function standingGrants(storage: Storage, clientId: string | undefined): Promise<GrantRecord[]> {
  const grants = await storage.grants.list(clientId === undefined ? {} : { clientId });
  return grants.filter((grant) => grant.revokedAt === null);
}

/**
 * The standing grants (of `clientId`, or of every client) of the user `given` names: a user id,
 * or the identifier the user logged in with (as `grants list` shows it, normalised as at login).
 * The user's id is `undefined` when no standing grant is the user's.
 */
async function grantsOfUser(
  storage: Storage,
  given: string,
  clientId: string | undefined,
): Promise<{ userId: string | undefined; grants: GrantRecord[] }> {
  const byId = (
    await storage.grants.list({ userId: given, ...(clientId === undefined ? {} : { clientId }) })
  ).filter((grant) => grant.revokedAt === null);
  if (byId.length > 0) return { userId: given, grants: byId };
  const standing = await standingGrants(storage, clientId);
  const identifier = normalizeIdentifier(given) ?? given;
  const matching = new Set<string>();
  const seen = new Set<string>();
  for (const grant of standing) {
    if (seen.has(grant.userId)) continue;
    seen.add(grant.userId);
    const user = await storage.users.find?.(grant.userId);
    if (user?.identifier === identifier) matching.add(grant.userId);
  }
  // One identifier in two namespaces (two host strategies' providers) is two people: say so.
  if (matching.size > 1) {
    const where = clientId === undefined ? 'grants' : `a grant for client ${clientId}`;
    throw new CliError(
      `${matching.size} users logged in as ${given} have ${where}: name one by its user_id (${[...matching].join(', ')})`,
    );
  }
  const [userId] = matching;
  return { userId, grants: standing.filter((grant) => grant.userId === userId) };
}
