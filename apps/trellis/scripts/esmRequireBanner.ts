/**
 * The line tsup puts on top of every ESM module in dist/: bundled CommonJS dependencies call
 * require() for Node built-ins. emitCommonJsCli.ts takes it off again (CommonJS has a real
 * `require`), so both read it from here.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __trellisCreateRequire } from 'node:module';\nconst require = __trellisCreateRequire(import.meta.url);";
