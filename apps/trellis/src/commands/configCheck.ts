import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { resolveRuntimeConfig } from '@trellis/config';
import { EMBEDDED_RUNTIME_TOML } from '../bundled.gen.ts';
import { describeConfigSource } from '../describeConfigSource.ts';
import { EXIT } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';

/** `trellis config check`: every error and warning of the config in use; exit 2 on errors. */
export function configCheck(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): number {
  const workspace = resolve(line.flags.workspace ?? process.cwd());
  const result = resolveRuntimeConfig({
    configPath: line.flags.config,
    env,
    workspace,
    home: env.HOME ?? homedir(),
    embeddedDefault: EMBEDDED_RUNTIME_TOML,
  });
  const ok = result.errors.length === 0;
  if (line.flags.json) {
    io.out(
      toJson({
        ok,
        source: result.source,
        path: result.path ?? null,
        errors: result.errors.map(({ code, message }) => ({ code, message })),
        warnings: result.warnings.map(({ code, message }) => ({ code, message })),
      }),
    );
  } else {
    io.out(`Config: ${describeConfigSource(result.source, result.path)}\n`);
    for (const problem of result.errors) io.out(`  error   ${problem.code}  ${problem.message}\n`);
    for (const problem of result.warnings) io.out(`  warning ${problem.code}  ${problem.message}\n`);
    io.out(ok ? `OK: ${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'}\n` : `${result.errors.length} error${result.errors.length === 1 ? '' : 's'}, ${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'}\n`);
  }
  return ok ? EXIT.OK : EXIT.USAGE;
}
