import { describeConfigSource } from '../describeConfigSource.ts';
import { EXIT } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import { loadConfig, resolveHostPaths } from '../loadConfig.ts';
import type { CommandLine } from '../parseCommandLine.ts';

/** `trellis config check`: every error and warning of the config in use; exit 2 on errors. */
export async function configCheck(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  // The same lookup and loading as every other command; the built-in default was checked by the build.
  const result = await loadConfig({ configPath: line.flags.config, env, ...resolveHostPaths({ workspace: line.flags.workspace, env }) });
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
