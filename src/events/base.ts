/** Fields every event has. */
export interface ServerEventBase {
  /** When it happened: epoch milliseconds from the server's clock. */
  at: number;
  /** The request's address as Express reports it (`req.ip`, which honours `trust proxy`). */
  ip?: string;
  /**
   * The request's id, as sent back in `X-Request-Id` and given to the logger and `onError`: an
   * event and the request it arose in are found together (an audit line, a log line, a client's
   * bug report). Absent outside a request (the CLI), and in front of the host's routes
   * (`requireBearer`) unless the host chose one.
   */
  requestId?: string;
}
