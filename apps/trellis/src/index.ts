export { assemble } from './assemble.ts';
export type { AssembleOptions, Assembly } from './assemble.ts';
export { main } from './main.ts';
export { ConfigError, UsageError, FailedError, EXIT } from './errors.ts';
export type { CommandIO } from './io.ts';
export { TRELLIS_VERSION } from './bundled.gen.ts';
