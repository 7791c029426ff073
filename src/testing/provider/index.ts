/** The development OpenID 2.0 provider, for demos and tests only. */
export { developmentProvider, type DevelopmentProviderOptions } from './router.js';
export { startDevelopmentProvider, type RunningDevelopmentProvider } from './start.js';
export type { ProviderShape } from './shapes.js';
