export { runtimeValidator, agreement } from './runtimeValidator.ts';
export { testToolContext, toolErrorOf, NO_HOST } from './testToolContext.ts';
