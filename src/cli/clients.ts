import { Option, type Command } from 'commander';
import { operatorMethod, registerClient, rotateClientSecret } from '../clients/register.js';
import { updateClient } from '../clients/update.js';
import { CliError } from './errors.js';
import { clientsOwnedBy, memberClients, removeClient, setClientDisabled } from '../clients/operator.js';
import {
  GRANT_OF_NAME,
  OPERATOR,
  clientJson,
  clientStatus,
  describeClient,
  grantName,
  ownerName,
  requireClient,
  scopeList,
  table,
  type GrantName,
} from './format.js';
import type { Storage } from '../storage/types.js';
import type { Cli } from './cli.js';
import { checkOfferedScopes, offeredScopesOption } from './scopes.js';
import { addUsageCommand, duration, unusedClients } from './usage.js';

/**
 * `clients add|list|show|usage|update|rotate-secret|disable|enable|remove`; resolves the `clients`
 * command, where the commands on members' clients are added too (src/cli/member-apps.ts).
 */
export function addClientCommands(
  program: Command,
  { withStorage, events, migrateOption, print, warn }: Cli,
  env: NodeJS.ProcessEnv,
): Command {
  const clients = program.command('clients').description('register and manage client applications');

  clients
    .command('add')
    .description(
      'register a client; prints its client_id and, for a confidential client, its client_secret (shown this once)',
    )
    .requiredOption('--name <name>', 'the application name users see on the consent page')
    .option(
      '--redirect-uri <uri>',
      'the registered redirect URI: https, http on a loopback address, or (with --public) a private-use scheme such as com.example.app:/cb; not for --grant device or client_credentials',
    )
    .addOption(
      new Option(
        '--grant <grant>',
        'the grant the client uses: code (web apps; native apps that open a browser), device (CLI tools, bots, consoles: RFC 8628), client_credentials (a bot, a job or a service acting as itself, for no member: RFC 6749 4.4; confidential, no redirect URI), implicit',
      )
        .choices(['code', 'device', 'client_credentials', 'implicit'])
        .default('code'),
    )
    .option(
      '--public',
      'a public client, with no secret (a desktop, mobile or command-line app: anything that cannot keep a secret); a code client then must use PKCE. Default: confidential, with a secret (a server)',
    )
    .requiredOption('--scope <scopes...>', 'scopes the client may request (at least one)', scopeList)
    .option(
      '--default-scope <scopes...>',
      'scopes granted when a request names none (default: all of --scope)',
      scopeList,
    )
    .option('--contact <contacts...>', "ways to reach the client's developers (e-mail addresses)", [])
    .option(
      '--post-logout-redirect-uri <uris...>',
      'where OpenID Connect RP-initiated logout may send the browser after sign-out (checked as the redirect URI)',
      [],
    )
    .option('--client-id <id>', 'choose the client_id (default: a random UUID)')
    .option('--require-pkce', 'refuse requests without a PKCE code_challenge (code clients)')
    .option(
      '--allowed-team <teams...>',
      'only members of these Launchpad teams (names without ~; the provider must be asked about them) may use the client',
    )
    .option(
      '--resource <uris...>',
      "the resources (RFC 8707) of the server's resources option it may ask tokens for (default: every one)",
    )
    .addOption(offeredScopesOption())
    .addOption(migrateOption())
    .action(
      (options: {
        migrate?: boolean;
        name: string;
        redirectUri?: string;
        grant: GrantName;
        public?: boolean;
        scope: string[];
        defaultScope?: string[];
        contact: string[];
        postLogoutRedirectUri: string[];
        clientId?: string;
        requirePkce?: boolean;
        allowedTeam?: string[];
        resource?: string[];
        offeredScopes?: string;
      }) => {
        checkOfferedScopes(
          options.offeredScopes,
          env,
          [...options.scope, ...(options.defaultScope ?? [])],
          warn,
        );
        return withStorage(options.migrate === true, async (storage) => {
          const issued = await registerClient(
            { storage, ...events },
            {
              applicationName: options.name,
              ...(options.redirectUri === undefined ? {} : { redirectUri: options.redirectUri }),
              grantType: GRANT_OF_NAME[options.grant],
              ...(options.public === true ? { public: true } : {}),
              scopes: options.scope,
              contacts: options.contact,
              ...(options.postLogoutRedirectUri.length
                ? { postLogoutRedirectUris: options.postLogoutRedirectUri }
                : {}),
              ...(options.defaultScope === undefined ? {} : { defaultScopes: options.defaultScope }),
              ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
              ...(options.requirePkce === true ? { requirePkce: true } : {}),
              ...(options.allowedTeam === undefined ? {} : { allowedTeams: options.allowedTeam }),
              ...(options.resource === undefined ? {} : { resources: options.resource }),
            },
          );
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
        });
      },
    );

  clients
    .command('list')
    .description('list the registered clients, with who owns each and whether it works (reads only)')
    .option(
      '--owner <user_id>',
      "only the clients of this member (their account id, as the owner column shows it); operator: only the operator's",
    )
    .addOption(
      new Option(
        '--members',
        "only members' clients (made on the developer page, or given to a member)",
      ).conflicts('owner'),
    )
    .option(
      '--unused-for <duration>',
      'only the clients not used for this long (30d, 12h; a client never used: since it was registered), with their last use',
      duration,
    )
    .action((options: { owner?: string; members?: boolean; unusedFor?: number }) =>
      withStorage(false, async (storage) => {
        const owner = options.owner === OPERATOR ? null : options.owner;
        const listed =
          owner !== undefined
            ? await clientsOwnedBy(storage, owner)
            : options.members === true
              ? await memberClients(storage)
              : await operatorMethod(storage, 'list')();
        if (options.unusedFor !== undefined) {
          const unused = await unusedClients(storage, listed, options.unusedFor, Date.now());
          print(
            unused.map(({ client, lastUsedAt }) => ({
              ...clientJson(client),
              last_used_at: isoOrNull(lastUsedAt),
            })),
            unused.length === 0
              ? `No client has gone unused for ${spokenDuration(options.unusedFor)} (one never used counts from its registration).`
              : table(
                  ['client_id', 'application_name', 'owner', 'status', 'last_used'],
                  unused.map(({ client, lastUsedAt }) => [
                    client.clientId,
                    client.applicationName,
                    ownerName(client),
                    clientStatus(client),
                    isoOrNull(lastUsedAt) ?? 'never',
                  ]),
                ),
          );
          return;
        }
        const all = listed;
        const none =
          owner === undefined
            ? options.members === true
              ? 'No member has a client.'
              : 'No clients are registered.'
            : owner === null
              ? 'The operator has no clients.'
              : `Member ${owner} has no clients.`;
        print(
          all.map(clientJson),
          all.length === 0
            ? none
            : table(
                ['client_id', 'application_name', 'grant', 'owner', 'status', 'verified', 'redirect_uri'],
                all.map((c) => [
                  c.clientId,
                  c.applicationName,
                  grantName(c),
                  ownerName(c),
                  clientStatus(c),
                  c.verified === true ? 'yes' : 'no',
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
      'change a registered client in place: its grants and tokens stay (narrowing its scopes does not revoke what users granted; see grants revoke)',
    )
    .argument('<client_id>')
    .option('--name <name>', 'the application name users see on the consent page')
    .option('--redirect-uri <uri>', 'the registered redirect URI (https, or http on loopback)')
    .addOption(
      new Option(
        '--grant <grant>',
        'another grant: to implicit the secret is dropped; from implicit a new secret is issued and shown once (unless --public); to device the redirect URI is dropped (a client_credentials client keeps its grant: register a new one)',
      ).choices(['code', 'device', 'implicit']),
    )
    .option('--public', 'make the client public: its secret is dropped (a code client then must use PKCE)')
    .option('--confidential', 'make the client confidential: a new secret is issued and shown once')
    .option('--scope <scopes...>', 'replace the scopes the client may request', scopeList)
    .option('--default-scope <scopes...>', 'replace the scopes granted when a request names none', scopeList)
    .option('--all-scopes-default', 'grant all of its scopes when a request names none')
    .option('--contact <contacts...>', "replace the ways to reach the client's developers")
    .option('--post-logout-redirect-uri <uris...>', 'replace where RP-initiated logout may send the browser')
    .option('--no-post-logout-redirect-uri', 'remove every post-logout redirect URI')
    .option('--require-pkce', 'refuse requests without a PKCE code_challenge (code clients)')
    .option('--no-require-pkce', 'accept requests without PKCE again')
    .option('--allowed-team <teams...>', 'replace the Launchpad teams whose members alone may use the client')
    .option('--no-allowed-team', 'let anyone use the client again')
    .option('--resource <uris...>', 'replace the resources (RFC 8707) it may ask tokens for')
    .option('--no-resource', 'let it ask tokens for every declared resource again')
    .addOption(offeredScopesOption())
    .addOption(migrateOption())
    .action(
      (
        clientId: string,
        options: {
          name?: string;
          redirectUri?: string;
          grant?: GrantName;
          public?: boolean;
          confidential?: boolean;
          scope?: string[];
          defaultScope?: string[];
          allScopesDefault?: boolean;
          contact?: string[];
          postLogoutRedirectUri?: string[] | false;
          requirePkce?: boolean;
          allowedTeam?: string[] | false;
          resource?: string[] | false;
          offeredScopes?: string;
          migrate?: boolean;
        },
      ) => {
        const scopes = [...(options.scope ?? []), ...(options.defaultScope ?? [])];
        if (scopes.length > 0) checkOfferedScopes(options.offeredScopes, env, scopes, warn);
        return withStorage(options.migrate === true, async (storage) => {
          // updateClient reads the client (once) and refuses an unknown one.
          const changes = {
            ...(options.name === undefined ? {} : { applicationName: options.name }),
            ...(options.redirectUri === undefined ? {} : { redirectUri: options.redirectUri }),
            ...(options.grant === undefined ? {} : { grantType: GRANT_OF_NAME[options.grant] }),
            ...(options.public === true ? { public: true } : {}),
            ...(options.confidential === true ? { public: false } : {}),
            ...(options.scope === undefined ? {} : { scopes: options.scope }),
            ...(options.defaultScope === undefined ? {} : { defaultScopes: options.defaultScope }),
            ...(options.allScopesDefault === true ? { defaultScopes: null } : {}),
            ...(options.contact === undefined ? {} : { contacts: options.contact }),
            ...(options.postLogoutRedirectUri === undefined
              ? {}
              : { postLogoutRedirectUris: options.postLogoutRedirectUri || [] }),
            ...(options.requirePkce === undefined ? {} : { requirePkce: options.requirePkce }),
            ...(options.allowedTeam === undefined ? {} : { allowedTeams: options.allowedTeam || [] }),
            ...(options.resource === undefined ? {} : { resources: options.resource || [] }),
          };
          if (Object.keys(changes).length === 0) {
            throw new CliError(
              'nothing to change: give at least one of --name, --redirect-uri, --grant, --public, --confidential, --scope, --default-scope, --all-scopes-default, --contact, --require-pkce, --no-require-pkce, --allowed-team, --no-allowed-team, --resource, --no-resource',
            );
          }
          const { clientSecret, ...client } = await updateClient({ storage, ...events }, clientId, changes);
          const secret =
            clientSecret === undefined
              ? ''
              : `\n\nclient_secret  ${clientSecret}\n\nThe secret is shown this once only.`;
          print(
            { ...clientJson(client), ...(clientSecret === undefined ? {} : { client_secret: clientSecret }) },
            `Client ${clientId} is updated.\n\n${describeClient(client)}${secret}`,
          );
        });
      },
    );

  addUsageCommand(clients, { withStorage, print });

  const onClient = clientCommand.bind(null, clients, { withStorage, migrateOption });

  onClient(
    'rotate-secret',
    "replace a code client's secret; the old one stops working at once",
    async (storage, clientId) => {
      const secret = await rotateClientSecret({ storage, ...events }, clientId);
      print(
        { client_id: clientId, client_secret: secret },
        `client_secret  ${secret}\n\nThe secret is shown this once only. The previous secret no longer works.`,
      );
    },
  );

  for (const [name, disabled, description] of [
    [
      'disable',
      true,
      'stop a client: it can no longer authorize or authenticate, and its tokens stop working at once',
    ],
    ['enable', false, 'let a disabled client work again (its unexpired tokens work again too)'],
  ] as const) {
    onClient(name, description, async (storage, clientId) => {
      const client = await setClientDisabled({ storage, ...events }, clientId, disabled);
      print(clientJson(client), `Client ${clientId} is ${disabled ? 'disabled' : 'enabled'}.`);
    });
  }

  onClient(
    'remove',
    'delete a client with its grants: its tokens and codes stop working at once',
    async (storage, clientId) => {
      await removeClient({ storage, ...events }, clientId);
      print(
        { client_id: clientId, removed: true },
        `Client ${clientId} and everything issued to it are removed.`,
      );
    },
  );
  return clients;
}

const isoOrNull = (at: number | null) => (at === null ? null : new Date(at).toISOString());

/**
 * A command on one existing client that writes: `<client_id>`, `--migrate`, then `run`, which
 * refuses an unknown client with its own read or write (no read before it).
 */
export function clientCommand(
  clients: Command,
  { withStorage, migrateOption }: Pick<Cli, 'withStorage' | 'migrateOption'>,
  name: string,
  description: string,
  run: (storage: Storage, clientId: string) => Promise<void>,
): Command {
  return clients
    .command(name)
    .description(description)
    .argument('<client_id>')
    .addOption(migrateOption())
    .action((clientId: string, options: { migrate?: boolean }) =>
      withStorage(options.migrate === true, (storage) => run(storage, clientId)),
    );
}

/** A duration `--unused-for` took, as it was written: `30d`, `12h`. */
function spokenDuration(ms: number): string {
  return ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : `${ms / 3_600_000}h`;
}
