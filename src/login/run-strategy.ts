import type { Request } from 'express';
import type { Strategy } from 'passport-strategy';

/** How a passport strategy ended one `authenticate` call. */
export type StrategyOutcome =
  | { kind: 'success'; user: unknown }
  | { kind: 'fail'; challenge: unknown; status: number | undefined }
  | { kind: 'redirect'; url: string; status: number }
  | { kind: 'pass' }
  | { kind: 'error'; error: unknown };

/** The actions passport gives a strategy for one `authenticate` call. */
interface StrategyActions {
  success(user: unknown): void;
  fail(challenge?: unknown, status?: number): void;
  redirect(url: string, status?: number): void;
  pass(): void;
  error(err: unknown): void;
}

/**
 * Runs a passport strategy once and resolves how it ended.
 *
 * This is the contract passport itself uses (an object inheriting from the strategy, given
 * `success`, `fail`, `redirect`, `pass` and `error`), without `passport.authenticate()`, which
 * assigns `req.login`, `req.logout`, `req.isAuthenticated` and `req._sessionManager` and so
 * would reach into a host's own passport setup. No passport instance, global or not, is involved.
 */
export function runStrategy(
  strategy: Strategy,
  req: Request,
  options: object = {},
): Promise<StrategyOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: StrategyOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const run = Object.create(strategy) as StrategyActions & { authenticate: Strategy['authenticate'] };
    run.success = (user) => settle({ kind: 'success', user });
    run.fail = (challenge, status) =>
      typeof challenge === 'number'
        ? settle({ kind: 'fail', challenge: undefined, status: challenge })
        : settle({ kind: 'fail', challenge, status });
    run.redirect = (url, status = 302) => settle({ kind: 'redirect', url, status });
    run.pass = () => settle({ kind: 'pass' });
    run.error = (error) => settle({ kind: 'error', error });
    try {
      run.authenticate(req, options);
    } catch (error) {
      settle({ kind: 'error', error });
    }
  });
}
