import type { Command } from 'commander';
import {
  KeyError,
  KeySecretError,
  retireKey,
  rotateKeys,
  signingRecord,
  type SigningAlgorithm,
} from '../oidc/keys.js';
import type { SigningKeyRecord } from '../storage/types.js';
import type { Cli } from './cli.js';
import { CliError } from './errors.js';
import { table } from './format.js';

/** What `keys list` shows of a key: never its private part, sealed or not. */
function keyJson(key: SigningKeyRecord, signing: string | undefined) {
  return {
    kid: key.kid,
    alg: key.alg,
    state: key.state,
    signs: key.kid === signing,
    created_at: new Date(key.createdAt).toISOString(),
    activated_at: key.activatedAt === null ? null : new Date(key.activatedAt).toISOString(),
    retired_at: key.retiredAt === null ? null : new Date(key.retiredAt).toISOString(),
  };
}

/** The secret that seals the private keys, from the environment only (never an argument: shells keep history). */
function keySecretOf(env: NodeJS.ProcessEnv): string {
  const secret = env.OIDC_KEY_SECRET;
  if (secret === undefined || secret.length < 32) {
    throw new CliError(
      'set OIDC_KEY_SECRET to the oidc.keySecret of your server (at least 32 characters): new keys are sealed with it',
    );
  }
  return secret;
}

/**
 * `keys list|rotate|retire`: the keys that sign ID tokens (OpenID Connect), kept in the database
 * with their private parts sealed. Every running instance sees a change within a minute.
 */
export function addKeyCommands(
  program: Command,
  { withStorage, events, migrateOption, print }: Cli,
  env: NodeJS.ProcessEnv,
): void {
  const keys = program
    .command('keys')
    .description('list, rotate and retire the keys that sign ID tokens (OpenID Connect)');

  const show = (records: SigningKeyRecord[]) => {
    const signing = signingRecord(records)?.kid;
    const rows = records.map((record) => keyJson(record, signing));
    print(
      rows,
      rows.length === 0
        ? 'No signing keys yet: the server makes its first ones when it first needs them, or run keys rotate.'
        : table(
            ['kid', 'alg', 'state', 'signs', 'created_at', 'activated_at', 'retired_at'],
            rows.map((r) => [
              r.kid,
              r.alg,
              r.state,
              r.signs ? 'yes' : '',
              r.created_at,
              r.activated_at ?? '',
              r.retired_at ?? '',
            ]),
          ),
    );
  };

  keys
    .command('list')
    .description('list the signing keys: next (published, not yet signing), active, retired (reads only)')
    .action(() => withStorage(false, async (storage) => show(await storage.keys.list())));

  keys
    .command('rotate')
    .description(
      'the next key starts signing and a new next key is published; the key that signed so far stays published until you retire it (needs OIDC_KEY_SECRET)',
    )
    .option(
      '--alg <alg>',
      'algorithm of the new key: RS256 or ES256 (default: that of the key that signs now)',
    )
    .addOption(migrateOption())
    .action((options: { alg?: string; migrate?: boolean }) => {
      if (options.alg !== undefined && options.alg !== 'RS256' && options.alg !== 'ES256') {
        throw new CliError(`--alg must be RS256 or ES256, not ${JSON.stringify(options.alg)}`);
      }
      const keySecret = keySecretOf(env);
      return withStorage(options.migrate === true, async (storage) => {
        try {
          show(
            await rotateKeys(
              storage.keys,
              keySecret,
              options.alg as SigningAlgorithm | undefined,
              Date.now(),
              events,
            ),
          );
        } catch (err) {
          if (err instanceof KeySecretError) {
            throw new CliError(
              `${err.message}: OIDC_KEY_SECRET must be the servers' oidc.keySecret; nothing was changed`,
            );
          }
          throw err;
        }
      });
    });

  keys
    .command('retire')
    .description(
      'retire a key: it leaves the JWK set and the ID tokens it signed stop verifying (the key that signs now is refused: rotate first)',
    )
    .argument('<kid>', 'the key, as keys list shows it')
    .option(
      '--force',
      'retire an older active key at once, even while instances may still sign with it (a compromised key); never the key that signs now',
    )
    .action((kid: string, options: { force?: boolean }) =>
      withStorage(false, async (storage) => {
        try {
          await retireKey(storage.keys, kid, Date.now(), options.force === true, events);
        } catch (err) {
          if (err instanceof KeyError) throw new CliError(err.message);
          throw err;
        }
        show(await storage.keys.list());
      }),
    );
}
