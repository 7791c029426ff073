// passport-openid ships no types; only what the interoperability test uses is declared.
declare module 'passport-openid' {
  import { Strategy as PassportStrategy } from 'passport-strategy';

  export interface StrategyOptions {
    returnURL: string;
    realm?: string;
    /** Default false: associations, verified locally. */
    stateless?: boolean;
    /** Default true: refuses an unencrypted association over plain http. */
    secure?: boolean;
    profile?: boolean;
    providerURL?: string;
    identifierField?: string;
  }

  export type VerifyCallback = (
    identifier: string,
    done: (err: unknown, user?: unknown, info?: unknown) => void,
  ) => void;

  export class Strategy extends PassportStrategy {
    constructor(options: StrategyOptions, verify: VerifyCallback);
    name: string;
  }
}
