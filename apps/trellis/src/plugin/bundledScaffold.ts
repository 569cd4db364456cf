import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.ts';

/** The Trellis checkout holding `from`: the folder with pnpm-workspace.yaml and apps/trellis. */
export function findTrellisCheckout(from: string): string | undefined {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml')) && existsSync(join(dir, 'apps', 'trellis', 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Writes a bundled plugin package under `<checkout>/plugins/<id>` (plugin.toml, package.json,
 * src/index.ts with one tool, tsconfig/tsup/vitest configs) and adds its dependency line to
 * apps/trellis/package.json. Returns the files written, relative to the checkout.
 */
export function scaffoldBundledPlugin(checkout: string, id: string): string[] {
  const folder = join(checkout, 'plugins', id);
  if (existsSync(folder)) throw new UsageError(`${folder} already exists; choose another id or remove it`);
  const packageName = `@trellis/plugin-${id}`;
  const files: Record<string, string> = {
    'plugin.toml': `# Required: schema_version, id, name, version, kind (see docs/plugin-authoring.md).
schema_version = 1
id = "${id}"
name = "${id}"
version = "0.1.0"
kind = "toolset"
description = "Greets people (a scaffold: change me)."
side_effects = false
# profile = "minimal"   # uncomment to switch it on by default; without it the plugin is opt-in (--allow ${id})
`,
    'package.json': `${JSON.stringify(
      {
        name: packageName,
        version: '0.1.0',
        private: true,
        description: 'A bundled Trellis plugin (scaffold).',
        type: 'module',
        sideEffects: false,
        exports: { '.': { '@trellis/source': './src/index.ts', default: './dist/index.js' } },
        files: ['dist', 'plugin.toml'],
        scripts: { build: 'tsup', typecheck: 'tsc -p tsconfig.json', lint: 'eslint .', test: 'vitest run' },
        dependencies: { '@trellis/sdk': 'workspace:*', zod: 'catalog:' },
      },
      null,
      2,
    )}\n`,
    'src/index.ts': `import { z } from 'zod';
import { definePlugin, defineTool } from '@trellis/sdk';

const greet = defineTool({
  name: 'greet',
  description: 'Greets someone by name.',
  input: z.object({ name: z.string().min(1).describe('Who to greet') }).strict(),
  examples: [{ description: 'Greet Ada', input: { name: 'Ada' } }],
  run({ name }) {
    return { message: \`Hello, \${name}!\` };
  },
});

// The id is required and must equal plugin.toml's; every other manifest field comes from plugin.toml.
export const plugin = definePlugin({ manifest: { id: '${id}' }, tools: [greet] });
`,
    'tsconfig.json': `${JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src', 'test', '*.ts'] }, null, 2)}\n`,
    'tsup.config.ts': `import { defineConfig } from 'tsup';\nimport { sharedTsup } from '../../tsup.shared.ts';\n\nexport default defineConfig({ ...sharedTsup, entry: ['src/index.ts'] });\n`,
    'vitest.config.ts': `import { sharedVitest } from '../../vitest.shared.ts';\n\nexport default sharedVitest;\n`,
  };
  mkdirSync(join(folder, 'src'), { recursive: true });
  for (const [path, text] of Object.entries(files)) writeFileSync(join(folder, path), text);

  // The app links exactly the plugins it depends on: add the line the build would ask for.
  const appManifest = join(checkout, 'apps', 'trellis', 'package.json');
  const app = JSON.parse(readFileSync(appManifest, 'utf8')) as { devDependencies?: Record<string, string> };
  app.devDependencies = { ...app.devDependencies, [packageName]: 'workspace:*' };
  writeFileSync(appManifest, `${JSON.stringify(app, null, 2)}\n`);
  return [...Object.keys(files).map((p) => `plugins/${id}/${p}`), 'apps/trellis/package.json'];
}
