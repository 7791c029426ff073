export { ServerEvents } from './emitter.js';
export { emit, eventContext } from './emit.js';
export type * from './types.js';
