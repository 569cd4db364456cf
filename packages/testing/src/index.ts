export { runtimeValidator, agreement } from './runtimeValidator.ts';
