// `pnpm --filter trellis generate`: writes src/bundled.gen.ts and bundled-entries.gen.json.
// Runs before every build and typecheck; fails the build with the file and key of any problem.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findWorkspaceRoot, linkBundledPlugins, pluginEntries, renderBundledIndex } from './bundledIndex.ts';

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = findWorkspaceRoot(appDir);
const { plugins, errors } = await linkBundledPlugins(root);
if (errors.length > 0) {
  process.stderr.write(`trellis build: cannot link the bundled plugins:\n${errors.map((e) => `  ${e}`).join('\n')}\n`);
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as { version: string };
const embedded = {
  EMBEDDED_RUNTIME_TOML: readFileSync(join(root, 'config/runtime.toml'), 'utf8'),
  EMBEDDED_PROFILES_TOML: readFileSync(join(root, 'config/profiles.toml'), 'utf8'),
  EMBEDDED_TOOLS_TOML: readFileSync(join(root, 'config/tools.toml'), 'utf8'),
};
writeFileSync(join(appDir, 'src/bundled.gen.ts'), renderBundledIndex({ plugins, outDir: join(appDir, 'src'), embedded, version: pkg.version }));
writeFileSync(join(appDir, 'bundled-entries.gen.json'), `${JSON.stringify(pluginEntries(plugins), null, 2)}\n`);
process.stderr.write(`trellis build: linked ${plugins.length} bundled plugins (${plugins.map((p) => p.manifest.id).join(', ')})\n`);
