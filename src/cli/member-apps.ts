import type { Command } from 'commander';
import {
  approveClient,
  setClientDisabled,
  setClientVerified,
  suspendClientsOf,
  transferClient,
} from '../clients/operator.js';
import type { Cli } from './cli.js';
import { clientCommand } from './clients.js';
import { CliError } from './errors.js';
import { OPERATOR, clientJson } from './format.js';

/**
 * `clients approve|verify|unverify|suspend|transfer`: the operator's decisions on members'
 * applications (made on the developer page), beside `clients list --members`, `enable` and
 * `remove`. The rules are src/clients/operator.ts's; this file reads arguments and prints.
 */
export function addMemberAppCommands(
  clients: Command,
  { withStorage, events, migrateOption, print, warn }: Cli,
): void {
  const onClient = clientCommand.bind(null, clients, { withStorage, migrateOption });

  onClient(
    'approve',
    "let a member's client waiting for approval (developerApps.requireApproval) be used: it may authorize and authenticate from now on",
    async (storage, clientId) => {
      const { client, approved } = await approveClient({ storage, ...events }, clientId);
      const disabled = client.disabled
        ? ` It stays disabled: let it work with: clients enable ${clientId}`
        : '';
      print(
        { ...clientJson(client), approved },
        approved
          ? `Client ${clientId} is approved.${disabled || ' It may be used now.'}`
          : `Client ${clientId} was not awaiting approval; nothing was changed.`,
      );
    },
  );

  for (const [name, verified, description] of [
    [
      'verify',
      true,
      "vouch for a client: the consent page says it is verified, and the reach cap of members' unverified clients (developerApps.unverifiedReach) no longer applies to it",
    ],
    [
      'unverify',
      false,
      'take back verify: the consent page no longer says so, and the reach cap applies again',
    ],
  ] as const) {
    onClient(name, description, async (storage, clientId) => {
      const { client, changed } = await setClientVerified({ storage, ...events }, clientId, verified);
      const state = verified ? 'verified' : 'not verified';
      print(
        { ...clientJson(client), changed },
        changed
          ? `Client ${clientId} is ${state}.`
          : `Client ${clientId} was ${state} already; nothing was changed.`,
      );
    });
  }

  clients
    .command('suspend')
    .description(
      'disable a client (as clients disable: its tokens stop working at once), or with --owner every client of a member; a member with a disabled client cannot create another. Undo one with: clients enable',
    )
    .argument('[client_id]', 'the client to suspend (or give --owner)')
    .option(
      '--owner <user_id>',
      "suspend every client of this member (their account id, as clients list's owner column shows it)",
    )
    .addOption(migrateOption())
    .action((clientId: string | undefined, options: { owner?: string; migrate?: boolean }) => {
      if ((clientId === undefined) === (options.owner === undefined)) {
        throw new CliError(
          'give a client_id or --owner <user_id> (one of them): clients suspend ID, or clients suspend --owner USER',
        );
      }
      if (options.owner === OPERATOR) {
        throw new CliError(
          "--owner takes a member's user id; stop an operator's client with: clients disable ID",
        );
      }
      return withStorage(options.migrate === true, async (storage) => {
        if (clientId !== undefined) {
          const client = await setClientDisabled({ storage, ...events }, clientId, true);
          const member =
            client.ownerId == null
              ? ''
              : ` Member ${client.ownerId} cannot create another client while it stays disabled.`;
          print(
            clientJson(client),
            `Client ${clientId} is suspended (disabled): it can no longer authorize or authenticate, and its tokens stop working at once.${member} Undo with: clients enable ${clientId}`,
          );
          return;
        }
        const owner = options.owner!;
        const { suspended, alreadyDisabled } = await suspendClientsOf({ storage, ...events }, owner);
        if (suspended.length + alreadyDisabled.length === 0) {
          throw new CliError(`member ${owner} has no clients (see: clients list --members)`);
        }
        const done = suspended.length
          ? `Suspended ${count(suspended, 'client')} of member ${owner} (${suspended.join(', ')}): their tokens stop working at once.`
          : `No client of member ${owner} was active.`;
        const already = alreadyDisabled.length
          ? ` ${count(alreadyDisabled, 'was', 'were')} disabled already (${alreadyDisabled.join(', ')}).`
          : '';
        print(
          { owner_id: owner, suspended, already_disabled: alreadyDisabled },
          `${done}${already}\nMember ${owner} cannot create another client while one stays disabled. Undo each with: clients enable ID`,
        );
      });
    });

  clients
    .command('transfer')
    .description(
      'give a client to another owner: a member (who then sees, changes and deletes it on the developer page), or the operator (--to operator). Its grants, tokens and secret stay',
    )
    .argument('<client_id>')
    .requiredOption(
      '--to <user_id>',
      `the new owner: a member's account id (as clients list's owner column shows it), or ${OPERATOR}`,
    )
    .addOption(migrateOption())
    .action((clientId: string, options: { to: string; migrate?: boolean }) => {
      if (options.to.trim() === '') throw new CliError(`--to needs a member's user id, or ${OPERATOR}`);
      const to = options.to === OPERATOR ? null : options.to;
      return withStorage(options.migrate === true, async (storage) => {
        if (to !== null && (await storage.users.find?.(to)) === null) {
          warn(
            `no user has the id ${to} in this database (an account id of the host's accounts hook is not kept here): the client is given to it anyway`,
          );
        }
        const { client, previousOwnerId } = await transferClient({ storage, ...events }, clientId, to);
        const json = { ...clientJson(client), previous_owner_id: previousOwnerId };
        const whose = (owner: string | null) => (owner === null ? "the operator's" : `member ${owner}'s`);
        if (previousOwnerId === to) {
          print(json, `Client ${clientId} is ${whose(to)} already; nothing was changed.`);
          return;
        }
        const lines = [
          to === null
            ? `Client ${clientId} is the operator's again (it was ${whose(previousOwnerId)}): it is off their developer page.`
            : `Client ${clientId} now belongs to member ${to} (it was ${whose(previousOwnerId)}).`,
        ];
        if (to !== null && previousOwnerId === null) {
          lines.push(
            `It was an operator's client: member ${to} can now change it, replace its secret and delete it on the developer page.`,
          );
        }
        if (to !== null && client.disabled) {
          lines.push(`It is disabled: member ${to} cannot create another client while it stays so.`);
        }
        print(json, lines.join('\n'));
      });
    });
}

/** `n things`, or with `singular`/`plural` given, `n was`/`n were`. */
function count(items: readonly unknown[], singular: string, plural = `${singular}s`): string {
  return `${items.length} ${items.length === 1 ? singular : plural}`;
}
