import { Command, InvalidArgumentError, Option } from 'commander';
import {
  ClientIdTakenError,
  operatorMethod,
  registerClient,
  rotateClientSecret,
  updateClient,
} from '../clients/register.js';
import { ServerEvents } from '../events/emitter.js';
import { revokeApplication } from '../grants/grant.js';
import { SCOPE_TOKEN } from '../grants/scopes.js';
import type { SqlStorage } from '../storage/sql/adapter.js';
import { connectStorage, databaseError, DatabaseError, redactUrl } from '../storage/sql/connect.js';
import type { ClientRecord, GrantRecord, Storage } from '../storage/types.js';

/** The exit codes of the command, as `--help` lists them. */
export const EXIT = {
  ok: 0,
  /** A wrong argument, or input refused: an invalid redirect URI, a taken or unknown client_id. */
  refused: 1,
  /** No database named (neither --database-url nor DATABASE_URL). */
  noDatabase: 2,
  /** The database failed: unreachable, authentication, no such database, schema not set up. */
  database: 3,
} as const;

/** A failure of a command: one line on stderr, and its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.refused,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

const EXIT_CODES_HELP = `
Database:
  Every command works on the database named by --database-url, else $DATABASE_URL, and
  prints which one on stderr. With neither, it refuses. Only \`migrate\` (or --migrate on a
  command that writes) changes the schema; the other commands never do.

Exit codes:
  0  done
  1  refused: a wrong argument, an invalid redirect URI or scope, a client_id taken or unknown
  2  no database named: pass --database-url or set DATABASE_URL
  3  the database failed: unreachable, authentication refused, no such database, or its schema
     is not set up (run: openid-oauth-bridge migrate)
`;

/** Where a command writes; tests and embedding hosts pass their own. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

interface GlobalOptions {
  databaseUrl?: string;
  json?: boolean;
}

/**
 * The operator's command line: `openid-oauth-bridge <command>`. Every command opens the
 * database, does its work and closes it; `--json` prints one JSON document for scripts.
 */
export function createProgram(io: Io, env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('openid-oauth-bridge')
    .description('Operate an openid-oauth-bridge authorization server: its database and its clients.')
    .option(
      '--database-url <url>',
      'sqlite:./file.db or postgres://user@host:5432/db (default: $DATABASE_URL; one of them is required)',
    )
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  /**
   * Opens the named database, says which on stderr, does the work and closes it. Migrates first
   * only when asked (`migrate: true`). A database failure becomes one line naming the database
   * and the cause, with exit code 3.
   */
  const withStorage = async <T>(migrate: boolean, work: (storage: SqlStorage) => Promise<T>): Promise<T> => {
    const given = program.opts<GlobalOptions>().databaseUrl;
    const databaseUrl = given ?? (env.DATABASE_URL || undefined);
    if (databaseUrl === undefined) {
      throw new CliError(
        'no database named: pass --database-url sqlite:./path/to/oauth.db (or postgres://user@host:5432/db), or set DATABASE_URL. ' +
          '(The demo, npm run demo, uses sqlite:./.data/demo.db.)',
        EXIT.noDatabase,
      );
    }
    io.err(
      `database: ${redactUrl(databaseUrl)} (from ${given === undefined ? 'DATABASE_URL' : '--database-url'})\n`,
    );
    let storage: SqlStorage;
    try {
      storage = await connectStorage(databaseUrl, { migrate });
    } catch (err) {
      if (err instanceof TypeError) throw new CliError(err.message, EXIT.refused);
      throw asCliError(err, databaseUrl);
    }
    try {
      return await work(storage);
    } catch (err) {
      throw asCliError(err, databaseUrl);
    } finally {
      await storage.close().catch(() => undefined);
    }
  };
  const migrateOption = () =>
    new Option('--migrate', 'bring the schema up to date first (as the migrate command does)');
  const print = (json: unknown, text: string) =>
    io.out(program.opts<GlobalOptions>().json === true ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);

  program
    .command('migrate')
    .description('bring the database schema up to date (safe to run twice, and from several hosts at once)')
    .action(() =>
      withStorage(false, async (storage) => {
        const applied = await storage.migrate();
        print(
          { applied },
          applied.length === 0 ? 'The schema is up to date.' : `Applied ${applied.join(', ')}.`,
        );
      }),
    );

  program
    .command('prune')
    .description(
      'delete expired ephemeral entries, tokens that can no longer work and old revoked grants, in batches (safe to run from several hosts)',
    )
    .option('--batch-size <n>', 'rows deleted per statement', positiveInteger, 1000)
    .addOption(migrateOption())
    .action((options: { batchSize: number; migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        const removed = await storage.prune(Date.now(), { batchSize: options.batchSize });
        const summary = Object.entries(removed)
          .map(([kind, count]) => `${count} ${kind}`)
          .join(', ');
        print({ removed }, `Removed ${summary}.`);
      }),
    );

  const clients = program.command('clients').description('register and manage client applications');

  clients
    .command('add')
    .description(
      'register a client; prints its client_id and, for a code client, its client_secret (shown this once)',
    )
    .requiredOption('--name <name>', 'the application name users see on the consent page')
    .requiredOption('--redirect-uri <uri>', 'the registered redirect URI (https, or http on loopback)')
    .addOption(
      new Option('--grant <grant>', 'the grant the client uses')
        .choices(['code', 'implicit'])
        .default('code'),
    )
    .requiredOption('--scope <scopes...>', 'scopes the client may request (at least one)', scopeList)
    .option(
      '--default-scope <scopes...>',
      'scopes granted when a request names none (default: all of --scope)',
      scopeList,
    )
    .option('--contact <contacts...>', "ways to reach the client's developers (e-mail addresses)", [])
    .option('--client-id <id>', 'choose the client_id (default: a random UUID)')
    .option('--require-pkce', 'refuse requests without a PKCE code_challenge (code clients)')
    .addOption(migrateOption())
    .action(
      (options: {
        migrate?: boolean;
        name: string;
        redirectUri: string;
        grant: 'code' | 'implicit';
        scope: string[];
        defaultScope?: string[];
        contact: string[];
        clientId?: string;
        requirePkce?: boolean;
      }) =>
        withStorage(options.migrate === true, async (storage) => {
          const issued = await registerClient(storage, {
            applicationName: options.name,
            redirectUri: options.redirectUri,
            grantType: options.grant === 'code' ? 'authorization_code' : 'implicit',
            scopes: options.scope,
            contacts: options.contact,
            ...(options.defaultScope === undefined ? {} : { defaultScopes: options.defaultScope }),
            ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
            ...(options.requirePkce === true ? { requirePkce: true } : {}),
          });
          const client = (await storage.clients.find(issued.clientId))!;
          const json = {
            ...clientJson(client),
            ...(issued.clientSecret ? { client_secret: issued.clientSecret } : {}),
          };
          print(
            json,
            [
              `client_id      ${issued.clientId}`,
              ...(issued.clientSecret
                ? [
                    `client_secret  ${issued.clientSecret}`,
                    '',
                    'The secret is shown this once only: send it to the applicant now.',
                  ]
                : []),
            ].join('\n'),
          );
        }),
    );

  clients
    .command('list')
    .description('list the registered clients (reads only)')
    .action(() =>
      withStorage(false, async (storage) => {
        const all = await operatorMethod(storage, 'list')();
        print(
          all.map(clientJson),
          all.length === 0
            ? 'No clients are registered.'
            : table(
                ['client_id', 'application_name', 'grant', 'status', 'redirect_uri'],
                all.map((c) => [
                  c.clientId,
                  c.applicationName,
                  grantName(c),
                  c.disabled ? 'disabled' : 'active',
                  c.redirectUri,
                ]),
              ),
        );
      }),
    );

  clients
    .command('show')
    .description('show one client (reads only)')
    .argument('<client_id>')
    .action((clientId: string) =>
      withStorage(false, async (storage) => {
        const client = await requireClient(storage, clientId);
        print(clientJson(client), describeClient(client));
      }),
    );

  clients
    .command('update')
    .description(
      'change a registered client in place: its secret, grants and tokens stay (narrowing its scopes does not revoke what users granted; see grants revoke)',
    )
    .argument('<client_id>')
    .option('--name <name>', 'the application name users see on the consent page')
    .option('--redirect-uri <uri>', 'the registered redirect URI (https, or http on loopback)')
    .option('--scope <scopes...>', 'replace the scopes the client may request', scopeList)
    .option('--default-scope <scopes...>', 'replace the scopes granted when a request names none', scopeList)
    .option('--all-scopes-default', 'grant all of its scopes when a request names none')
    .option('--contact <contacts...>', "replace the ways to reach the client's developers")
    .option('--require-pkce', 'refuse requests without a PKCE code_challenge (code clients)')
    .option('--no-require-pkce', 'accept requests without PKCE again')
    .addOption(migrateOption())
    .action(
      (
        clientId: string,
        options: {
          name?: string;
          redirectUri?: string;
          scope?: string[];
          defaultScope?: string[];
          allScopesDefault?: boolean;
          contact?: string[];
          requirePkce?: boolean;
          migrate?: boolean;
        },
      ) =>
        withStorage(options.migrate === true, async (storage) => {
          await requireClient(storage, clientId);
          const changes = {
            ...(options.name === undefined ? {} : { applicationName: options.name }),
            ...(options.redirectUri === undefined ? {} : { redirectUri: options.redirectUri }),
            ...(options.scope === undefined ? {} : { scopes: options.scope }),
            ...(options.defaultScope === undefined ? {} : { defaultScopes: options.defaultScope }),
            ...(options.allScopesDefault === true ? { defaultScopes: null } : {}),
            ...(options.contact === undefined ? {} : { contacts: options.contact }),
            ...(options.requirePkce === undefined ? {} : { requirePkce: options.requirePkce }),
          };
          if (Object.keys(changes).length === 0) {
            throw new CliError(
              'nothing to change: give at least one of --name, --redirect-uri, --scope, --default-scope, --all-scopes-default, --contact, --require-pkce, --no-require-pkce',
            );
          }
          const client = await updateClient(storage, clientId, changes);
          print(clientJson(client), `Client ${clientId} is updated.\n\n${describeClient(client)}`);
        }),
    );

  clients
    .command('rotate-secret')
    .description("replace a code client's secret; the old one stops working at once")
    .argument('<client_id>')
    .addOption(migrateOption())
    .action((clientId: string, options: { migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        await requireClient(storage, clientId);
        const secret = await rotateClientSecret(storage, clientId);
        print(
          { client_id: clientId, client_secret: secret },
          `client_secret  ${secret}\n\nThe secret is shown this once only. The previous secret no longer works.`,
        );
      }),
    );

  for (const [name, disabled, description] of [
    [
      'disable',
      true,
      'stop a client: it can no longer authorize or authenticate, and its tokens stop working at once',
    ],
    ['enable', false, 'let a disabled client work again (its unexpired tokens work again too)'],
  ] as const) {
    clients
      .command(name)
      .description(description)
      .argument('<client_id>')
      .addOption(migrateOption())
      .action((clientId: string, options: { migrate?: boolean }) =>
        withStorage(options.migrate === true, async (storage) => {
          await requireClient(storage, clientId);
          const client = (await operatorMethod(storage, 'update')(clientId, { disabled }))!;
          print(clientJson(client), `Client ${clientId} is ${disabled ? 'disabled' : 'enabled'}.`);
        }),
      );
  }

  clients
    .command('remove')
    .description('delete a client with its grants: its tokens and codes stop working at once')
    .argument('<client_id>')
    .addOption(migrateOption())
    .action((clientId: string, options: { migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        await requireClient(storage, clientId);
        await operatorMethod(storage, 'remove')(clientId);
        print(
          { client_id: clientId, removed: true },
          `Client ${clientId} and everything issued to it are removed.`,
        );
      }),
    );

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

  return program;
}

/** A client in the spec's field names. */
function clientJson(client: ClientRecord) {
  return {
    client_id: client.clientId,
    application_name: client.applicationName,
    redirect_uri: client.redirectUri,
    grant_type: client.grantType,
    scope: client.scopes.join(' '),
    default_scope: (client.defaultScopes ?? client.scopes).join(' '),
    contacts: client.contacts ?? [],
    disabled: client.disabled,
    require_pkce: client.requirePkce === true,
    created_at: new Date(client.createdAt).toISOString(),
  };
}

function describeClient(client: ClientRecord): string {
  const json = clientJson(client);
  return [
    `client_id         ${json.client_id}`,
    `application_name  ${json.application_name}`,
    `redirect_uri      ${json.redirect_uri}`,
    `grant             ${grantName(client)}`,
    `scope             ${json.scope || '(none)'}`,
    `default scope     ${json.default_scope || '(none)'}`,
    `contacts          ${json.contacts.join(', ') || '(none)'}`,
    `require PKCE      ${json.require_pkce ? 'yes' : 'no'}`,
    `status            ${client.disabled ? 'disabled' : 'active'}`,
    `created_at        ${json.created_at}`,
  ].join('\n');
}

async function grantJson(storage: Storage, grant: GrantRecord) {
  const user = (await storage.users.find?.(grant.userId)) ?? null;
  return {
    user_id: grant.userId,
    user_identifier: user?.identifier ?? null,
    provider: user?.provider ?? null,
    client_id: grant.clientId,
    grant_id: grant.grantId,
    scope: grant.scopes.join(' '),
    authorized_at: new Date(grant.createdAt).toISOString(),
    updated_at: new Date(grant.updatedAt).toISOString(),
  };
}

async function requireClient(storage: Storage, clientId: string): Promise<ClientRecord> {
  const client = await storage.clients.find(clientId);
  if (!client) throw new CliError(`no client has client_id ${clientId} (see: clients list)`);
  return client;
}

const grantName = (client: ClientRecord) => (client.grantType === 'authorization_code' ? 'code' : 'implicit');

/** Columns padded to their widest cell; the last column is left ragged. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** Commander's variadic parser: collects each scope, refusing what is not an RFC 6749 scope token. */
function scopeList(value: string, previous: string[] | undefined): string[] {
  const scopes = value.split(' ').filter(Boolean);
  const bad = scopes.find((scope) => !SCOPE_TOKEN.test(scope));
  if (bad !== undefined || scopes.length === 0)
    throw new InvalidArgumentError(`${JSON.stringify(value)} is not a scope.`);
  return [...(previous ?? []), ...scopes];
}

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidArgumentError('must be a positive integer.');
  }
  return number;
}

/**
 * What a command threw, as one line and an exit code: the database's failures (named with the
 * database) exit 3, refused input 1.
 */
function asCliError(err: unknown, databaseUrl: string): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof ClientIdTakenError) {
    return new CliError(
      `client_id ${err.clientId} is already registered in ${redactUrl(databaseUrl)}: choose another --client-id, or change that client with: clients update ${err.clientId}`,
    );
  }
  if (err instanceof TypeError) return new CliError(err.message.replace(/^openid-oauth-bridge: /, ''));
  const described = databaseError(err, databaseUrl);
  if (described instanceof DatabaseError && described.failure === 'duplicate') {
    return new CliError(described.message.replace(/^openid-oauth-bridge: /, ''));
  }
  const fromDriver = typeof (err as { code?: unknown } | null)?.code === 'string';
  if (described instanceof DatabaseError && (described.failure !== 'other' || fromDriver)) {
    return new CliError(described.message.replace(/^openid-oauth-bridge: /, ''), EXIT.database);
  }
  return new CliError((err as Error)?.message ?? String(err));
}
