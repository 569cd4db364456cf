// `pnpm --filter trellis generate`: writes src/bundled.gen.ts and bundled-entries.gen.json.
// Runs before every build; fails the build with the file and key of any problem.
//
// The config files under config/ are embedded twice: as text (what `trellis config check` and the
// docs show) and pre-parsed (what startup uses), so a run on the built-in default parses no TOML
// and loads no schema library. They are parsed here by the very functions that parse them at run
// time, so the two forms cannot disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRuntimeConfig } from '@trellis/config';
import { parseProfiles } from '@trellis/registry/parse';
import { parseToolOverrides } from '@trellis/catalog/overrides';
import { findWorkspaceRoot, linkBundledPlugins, pluginEntries, renderBundledIndex, undeclaredPluginProblems } from './bundledIndex.ts';
import { renderBundledValidators } from './bundledValidators.ts';

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = findWorkspaceRoot(appDir);
const fail = (problems: readonly string[]) => {
  process.stderr.write(`trellis build: cannot link the bundled plugins:\n${problems.map((e) => `  ${e}`).join('\n')}\n`);
  process.exit(1);
};

const { plugins, errors } = await linkBundledPlugins(root);
if (errors.length > 0) fail(errors);
const appPackage = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as {
  version: string;
  dependencies?: Record<string, string>;
};
const undeclared = undeclaredPluginProblems(appPackage, plugins);
if (undeclared.length > 0) fail(undeclared);

const read = (file: string) => readFileSync(join(root, file), 'utf8');
const runtimeToml = read('config/runtime.toml');
const profilesToml = read('config/profiles.toml');
const toolsToml = read('config/tools.toml');

// A base folder no real path starts with: if it shows up in the parsed value, the default used a
// relative path, which must resolve against each user's workspace at run time instead.
const probeBase = '/trellis-embedded-default-base';
const config = parseRuntimeConfig(runtimeToml, { fileName: 'config/runtime.toml', env: {}, baseDir: probeBase });
const configProblems = [...config.errors, ...config.warnings].map((p) => p.message);
if (config.value !== undefined && JSON.stringify(config.value).includes(probeBase)) {
  configProblems.push('config/runtime.toml: the built-in default must not set relative paths; leave them empty');
}
const profiles = parseProfiles(profilesToml);
const profileProblems = [...profiles.errors, ...profiles.warnings].map((p) => `config/profiles.toml: ${p.message}`);
const knownTools = plugins.flatMap((p) => p.tools.map((t) => `${p.manifest.id}.${t.name}`));
const overrides = parseToolOverrides(toolsToml, { file: 'config/tools.toml', knownTools });
const overrideProblems = [...overrides.errors, ...overrides.warnings].map((p) => p.message);
const problems = [...configProblems, ...profileProblems, ...overrideProblems];
if (problems.length > 0) fail(problems);

const embedded = {
  EMBEDDED_RUNTIME_TOML: { value: runtimeToml },
  EMBEDDED_RUNTIME_CONFIG: { value: config.value, type: 'RuntimeConfig' },
  EMBEDDED_PROFILES: { value: profiles.value, type: 'ProfilesData' },
  EMBEDDED_TOOL_OVERRIDES: { value: overrides.value, type: 'ToolOverrides' },
};
writeFileSync(
  join(appDir, 'src/bundled.gen.ts'),
  renderBundledIndex({ plugins, outDir: join(appDir, 'src'), embedded, version: appPackage.version }),
);
writeFileSync(join(appDir, 'src/bundledValidators.gen.ts'), renderBundledValidators(plugins));
writeFileSync(join(appDir, 'bundled-entries.gen.json'), `${JSON.stringify(pluginEntries(plugins), null, 2)}\n`);
process.stderr.write(`trellis build: linked ${plugins.length} bundled plugins (${plugins.map((p) => p.manifest.id).join(', ')})\n`);
