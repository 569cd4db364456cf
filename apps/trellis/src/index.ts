export { TRELLIS_VERSION } from './bundled.gen.ts';
