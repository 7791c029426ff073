/** Fields every event has. */
export interface ServerEventBase {
  /** When it happened: epoch milliseconds from the server's clock. */
  at: number;
  /** The request's address as Express reports it (`req.ip`, which honours `trust proxy`). */
  ip?: string;
}
