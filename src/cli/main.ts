#!/usr/bin/env node
import { createInterface } from 'node:readline/promises';
import { createProgram, reportFailure, type Io } from './program.js';

/**
 * The `openid-oauth-bridge` command. A wrong argument or a failed command prints one line (with
 * `--json`, a JSON document on stdout too) and exits non-zero (the codes are in `--help`); never
 * a stack trace.
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

const program = createProgram(io);
program.parseAsync(process.argv).catch((err: unknown) => {
  process.exitCode = reportFailure(program, io, err, process.argv);
});
