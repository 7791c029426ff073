import type { Context } from '../http/pipeline.js';
import { LoginSession } from './session.js';

/** The step that loads the login session: express-session (the library's or the host's) runs. */
export function loadSession(ctx: Context): Promise<void> {
  const { server, req, res } = ctx;
  return new Promise((resolve, reject) => {
    server.session.middleware(req, res, (err?: unknown) => {
      if (err) return reject(err);
      ctx.session = new LoginSession(req, server.clock, server.session.own);
      resolve();
    });
  });
}
