import type { Context } from '../http/pipeline.js';
import { LoginSession } from './session.js';

/**
 * The step that loads the login session: express-session (the library's or the host's) runs.
 * What the request reads next that does not depend on the session (`ctx.readAlongSession`) is
 * read with it, in one batch, where the session allows (`server.session.readAlong`).
 */
export function loadSession(ctx: Context): Promise<void> {
  const { server, req, res } = ctx;
  const { middleware, readAlong } = server.session;
  const reads = ctx.readAlongSession;
  return new Promise((resolve, reject) => {
    const loaded = (err?: unknown) => {
      if (err) return reject(err);
      ctx.session = new LoginSession(req, server.clock, server.session.own);
      resolve();
    };
    if (readAlong === undefined || reads === undefined) return middleware(req, res, loaded);
    const done = (view: Context['storage']) => {
      ctx.storage = view;
    };
    readAlong(reads, done, () => middleware(req, res, loaded));
  });
}
