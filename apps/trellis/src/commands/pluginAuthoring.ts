import { chmodSync, existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { PLUGIN_ID_PATTERN } from '@trellis/sdk';
import { assemble, type Assembly } from '../assemble.ts';
import { EXIT, FailedError, UsageError } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { findTrellisCheckout, scaffoldBundledPlugin } from '../plugin/bundledScaffold.ts';
import { exampleInputFor } from '../plugin/exampleInputFor.ts';
import { EXTERNAL_TYPES, LANGUAGES, externalScaffold, type ExternalType, type Language } from '../plugin/scaffoldTemplates.ts';

/** The port a scaffolded HTTP plugin listens on by default. */
const DEFAULT_HTTP_PORT = 8787;

/** `trellis plugin new <id> --external process|script|http [--lang python|node|sh]`: a working plugin folder. */
export function pluginNew(line: CommandLine, io: CommandIO): number {
  const id = line.args[0]!;
  if (!PLUGIN_ID_PATTERN.test(id))
    throw new UsageError(
      `plugin id "${id}" must be 1–64 lowercase letters, digits or dashes, starting and ending with a letter or digit (e.g. hello-world)`,
    );
  const type = line.options.external;
  if (type === undefined) return bundledNew(line, io, id);
  if (!(EXTERNAL_TYPES as readonly string[]).includes(type))
    throw new UsageError(`--external must be one of ${EXTERNAL_TYPES.join(', ')}; got "${type}"`);
  const lang = line.options.lang ?? 'python';
  if (!(LANGUAGES as readonly string[]).includes(lang))
    throw new UsageError(`--lang must be one of ${LANGUAGES.join(', ')}; got "${lang}"`);
  if (lang === 'sh' && type !== 'script')
    throw new UsageError(`--lang sh is for script plugins (a shell cannot speak the ${type} protocol well); use --lang python or node`);
  const folder = resolve(line.flags.workspace ?? process.cwd(), id);
  if (existsSync(folder)) throw new UsageError(`${folder} already exists; choose another id or remove it`);
  const files = externalScaffold(id, type as ExternalType, lang as Language, DEFAULT_HTTP_PORT);
  mkdirSync(folder, { recursive: true });
  for (const file of files) {
    writeFileSync(join(folder, file.path), file.text);
    if (file.executable) chmodSync(join(folder, file.path), 0o755);
  }
  const root = dirname(folder);
  if (line.flags.json) {
    io.out(toJson({ id, type, lang, folder, files: files.map((f) => f.path) }));
    return EXIT.OK;
  }
  io.out(`Created ${folder}: ${files.map((f) => f.path).join(', ')}\n\nNext:\n`);
  if (type === 'http')
    io.out(`  (cd ${folder} && ${lang === 'node' ? 'node' : 'python3'} ${files[1]!.path})   # start the server (keep it running)\n`);
  io.out(`  trellis plugin test ${folder}\n  trellis --plugin-path ${root} --allow ${id} tools call ${id}.greet --args '{"name":"Ada"}'\n`);
  io.out(`To keep it on: add "${id}" to [plugins] allow and ${root} to [plugins] paths in runtime.toml.\n`);
  return EXIT.OK;
}

/** `trellis plugin new <id>` inside a Trellis checkout: the package under plugins/ and the app's dependency line. */
function bundledNew(line: CommandLine, io: CommandIO, id: string): number {
  if (line.options.lang !== undefined && line.options.lang !== 'node')
    throw new UsageError('a bundled plugin is TypeScript; --lang is for --external plugins');
  const from = line.flags.workspace ?? process.cwd();
  const checkout = findTrellisCheckout(from);
  if (checkout === undefined) {
    throw new UsageError(
      `a bundled plugin is a package in a Trellis checkout's plugins/ folder, and ${resolve(from)} is not inside one; run this in the repository, or scaffold an external plugin with --external process|script|http`,
    );
  }
  const files = scaffoldBundledPlugin(checkout, id);
  if (line.flags.json) {
    io.out(toJson({ id, type: 'bundled', folder: join(checkout, 'plugins', id), files }));
    return EXIT.OK;
  }
  io.out(
    `Created plugins/${id} and added "@trellis/plugin-${id}": "workspace:*" to the devDependencies of apps/trellis/package.json:\n${files.map((f) => `  ${f}`).join('\n')}\n\nNext (in ${checkout}):\n`,
  );
  io.out(
    `  npx -y pnpm@10 install\n  npx -y pnpm@10 --filter "trellis..." build\n  node apps/trellis/dist/cli.cjs --allow ${id} tools call ${id}.greet --args '{"name":"Ada"}'\n`,
  );
  return EXIT.OK;
}

/** One line of the `plugin test` report. */
interface Finding {
  readonly step: string;
  readonly ok: boolean;
  readonly message: string;
}

/**
 * `trellis plugin test <dir>`: the manifest, admission, the handshake, and a call to each tool with
 * its example or a schema-generated input; prints what to fix. Exit 0 when everything passed.
 */
export async function pluginTest(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const dir = resolve(line.args[0]!);
  if (!existsSync(join(dir, 'plugin.toml')) || !statSync(dir).isDirectory()) {
    throw new FailedError(
      `${join(dir, 'plugin.toml')} does not exist; give the plugin's folder (the one holding plugin.toml), or make one with \`trellis plugin new <id> --external script\``,
    );
  }
  const real = realpathSync(dir);
  const base = {
    workspace: line.flags.workspace ?? process.cwd(),
    ...(line.flags.config !== undefined ? { configPath: line.flags.config } : {}),
    pluginPaths: [dirname(real)],
    env,
    discoverExternalTools: true,
  };
  // First pass: which id the registry gives this folder; then the run proper, allowed for this test.
  const idGuess = await withAssembly(
    { ...base, discoverExternalTools: false },
    (a) => a.snapshot.plugins.find((p) => !p.bundled && p.pluginDir === real)?.id ?? basename(real),
  );
  const findings: Finding[] = [];
  const allow = PLUGIN_ID_PATTERN.test(idGuess) ? { commandLine: { allow: [idGuess] } } : {};
  await withAssembly({ ...base, ...allow }, async (assembly) => {
    const explanation = assembly.explain(idGuess);
    const candidate = explanation.candidates.find((c) => c.pluginDir === real);
    if (candidate === undefined) {
      findings.push({
        step: 'manifest',
        ok: false,
        message: `the registry found no plugin in ${real}; is plugin.toml a regular file there?`,
      });
      return;
    }
    const invalid = candidate.checks.find((c) => c.code === 'MANIFEST_INVALID' && c.result === 'fail');
    findings.push(
      invalid
        ? { step: 'manifest', ok: false, message: invalid.message }
        : { step: 'manifest', ok: true, message: `${join(real, 'plugin.toml')} is valid (id "${idGuess}")` },
    );
    if (invalid) return;
    const failed = candidate.checks.filter((c) => c.result === 'fail');
    findings.push(
      failed.length === 0
        ? { step: 'admission', ok: true, message: 'every admission check passed' }
        : { step: 'admission', ok: false, message: failed.map((c) => `${c.code}: ${c.message}`).join('\n') },
    );
    if (candidate.state !== 'enabled') {
      findings.push({ step: 'enabled', ok: false, message: candidate.reasons.map((r) => `${r.code}: ${r.message}`).join('\n') });
      return;
    }
    const tools = assembly.catalog.descriptors.filter((d) => d.plugin === idGuess);
    const lifecycle = assembly.lifecycle(idGuess);
    if (lifecycle?.state === 'error' || lifecycle?.state === 'disabled') {
      findings.push({ step: 'handshake', ok: false, message: lifecycle.lastError ?? `the plugin is ${lifecycle.state}` });
      return;
    }
    if (tools.length === 0) {
      findings.push({
        step: 'tools',
        ok: false,
        message: 'the plugin offers no tools: declare [[tools]] in plugin.toml (or report them from get_tools / GET /tools)',
      });
      return;
    }
    for (const tool of tools) {
      const input = tool.examples[0]?.input ?? exampleInputFor(tool.inputSchema);
      const outcome = await assembly.runtime.invoke({ name: tool.name, input });
      const args = JSON.stringify(input);
      findings.push(
        outcome.ok
          ? { step: `call ${tool.name}`, ok: true, message: `${args} → ${JSON.stringify(outcome.value)}` }
          : { step: `call ${tool.name}`, ok: false, message: `${args} → ${outcome.error.code}: ${outcome.error.message}` },
      );
      if (!outcome.ok && outcome.error.code === 'PLUGIN_LOAD_FAILED') {
        findings.splice(findings.length - 1, 0, { step: 'handshake', ok: false, message: outcome.error.message });
        break;
      }
    }
    const state = assembly.lifecycle(idGuess);
    if (state !== undefined && state.state !== 'error' && !findings.some((f) => f.step === 'handshake')) {
      findings.splice(findings.length - tools.length, 0, { step: 'handshake', ok: true, message: `the plugin started (${state.state})` });
    }
  });
  const problems = findings.filter((f) => !f.ok);
  if (line.flags.json) {
    io.out(toJson({ dir: real, id: idGuess, ok: problems.length === 0, findings }));
  } else {
    for (const f of findings) io.out(`${f.ok ? 'ok  ' : 'FAIL'} ${f.step}: ${f.message.split('\n').join('\n       ')}\n`);
    io.out(
      problems.length === 0
        ? `\n${idGuess}: every check passed.\n`
        : `\n${idGuess}: ${problems.length} problem${problems.length === 1 ? '' : 's'}; fix ${problems.length === 1 ? 'it' : 'them'} and run \`trellis plugin test ${line.args[0]}\` again.\n`,
    );
  }
  return problems.length === 0 ? EXIT.OK : EXIT.FAILED;
}

async function withAssembly<T>(options: Parameters<typeof assemble>[0], use: (assembly: Assembly) => T | Promise<T>): Promise<T> {
  const assembly = await assemble(options);
  try {
    return await use(assembly);
  } finally {
    await assembly.dispose();
  }
}
