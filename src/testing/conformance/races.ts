import type { ConformanceSuite } from './api.js';
import {
  clientCmd,
  consentCmd,
  exchangeCmd,
  refreshCmd,
  registerAgainCmd,
  revokeCmd,
  stepCmd,
} from './race-commands.js';
import { checkSettled } from './race-invariants.js';
import { setUpWorld, type Model, type World } from './race-world.js';

type FastCheck = typeof import('fast-check');

/** The largest fault index drawn: past a request's last call, the fault never strikes. */
const MAX_FAULT_AT = 7;

/** Commands per run. */
const MAX_COMMANDS = 8;

/**
 * Model-based race tests: concurrent code exchanges, refreshes, consents, revocations, client
 * disables or removals and registrations again under a removed client's id, every storage call scheduled by fast-check's scheduler, some failing and retried.
 * After every command and once everything settles, the invariants of the grant rules must hold
 * (see race-invariants.ts). fast-check is loaded when the tests run, so the rest of the kit works
 * without it.
 */
export function raceTests(suite: ConformanceSuite): void {
  const { describe, it, storage } = suite;

  async function loadFastCheck(): Promise<FastCheck> {
    try {
      return await import('fast-check');
    } catch (error) {
      throw new Error(
        `The race tests of the conformance kit need fast-check (npm install --save-dev fast-check): ${String(error)}`,
      );
    }
  }

  async function runProperty(rotate: boolean): Promise<void> {
    const fc = await loadFastCheck();
    const fault = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: MAX_FAULT_AT }));
    const code = fc.integer({ min: 0, max: 1 });
    const steps = fc.integer({ min: 1, max: 4 }).map(stepCmd);
    const commands = fc.commands<Model, World, false>(
      [
        fc.tuple(code, fault).map(([c, at]) => exchangeCmd(c, at)),
        fc.tuple(code, fault).map(([c, at]) => exchangeCmd(c, at)),
        fc.tuple(fc.boolean(), fault).map(([latest, at]) => refreshCmd(latest, at)),
        fault.map(revokeCmd),
        fc.constantFrom<'disable' | 'remove'>('disable', 'remove').map((kind) => clientCmd(suite, kind)),
        fc.constant(consentCmd()),
        fc.constant(registerAgainCmd()),
        steps,
        steps,
      ],
      { maxCommands: MAX_COMMANDS },
    );
    const distinct = new Set<string>();
    let runs = 0;
    const property = fc.asyncProperty(fc.scheduler(), commands, async (s, cmds) => {
      runs++;
      const world = await setUpWorld(storage(), (client) => suite.putClient(client), s, rotate);
      await fc.asyncModelRun(
        () => ({
          model: { revokes: 0, clientChanges: 0, consents: 0, removed: false, registeredAgain: false },
          real: world,
        }),
        cmds,
      );
      await s.waitFor(Promise.all(world.pending));
      await checkSettled(world);
      distinct.add(
        `${[...cmds].map(String).join(';')}|${s
          .report()
          .map((task) => task.label)
          .join(';')}`,
      );
    });
    const { races } = suite;
    const details = await fc.check(property, {
      numRuns: races.runs,
      ...(races.seed === undefined ? {} : { seed: races.seed }),
      ...(races.path === undefined ? {} : { path: races.path }),
      plugins: [fc.interruptAfterTimeLimit(races.timeLimitMs)],
    });
    suite.explored(runs, distinct.size, details.interrupted);
    if (details.failed) {
      const cause =
        details.errorInstance instanceof Error
          ? details.errorInstance.message
          : String(details.errorInstance);
      throw new Error(
        `Race property failed (rotation ${rotate ? 'on' : 'off'}): ${cause}\n` +
          `Replay it with the option races: { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} }.\n` +
          (fc.defaultReportMessage(details) ?? ''),
      );
    }
  }

  describe('races: concurrent exchanges, refreshes, revocations and client changes, explored by fast-check', () => {
    for (const rotate of [false, true]) {
      it(`every interleaving keeps the grant rules (rotation ${rotate ? 'on' : 'off'})`, () =>
        runProperty(rotate));
    }
  });
}
