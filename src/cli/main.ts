#!/usr/bin/env node
import { createInterface } from 'node:readline/promises';
import { CommanderError } from 'commander';
import { CliError, createProgram, EXIT, type Io } from './program.js';

/**
 * The `openid-oauth-bridge` command. A wrong argument or a failed command prints one line and
 * exits non-zero (the codes are in `--help`); never a stack trace.
 */
const io: Io = {
  out: (text: string) => process.stdout.write(text),
  err: (text: string) => process.stderr.write(text),
  // Only a person at a terminal is asked; a script passes --yes.
  ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm } : {}),
};

async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}

createProgram(io)
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (err instanceof CommanderError) {
      // Commander has printed its message (or the help); keep its exit code (0 for --help).
      process.exitCode = err.exitCode;
    } else {
      io.err(`error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = err instanceof CliError ? err.exitCode : EXIT.refused;
    }
  });
