import { join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

// The layer order and the "no relative path into another package" rule live in eslint.config.js.
// These probes lint source text as if it were a file of a package, so a rule that silently stops
// matching (a renamed element, a resolver that no longer resolves) fails here, not in review.
const root = join(import.meta.dirname, '..', '..', '..');
// The probe files do not exist, so no TypeScript project holds them: lint them without type information.
const eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });

async function boundaryMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  const fatal = result?.messages.find((m) => m.fatal);
  if (fatal !== undefined) throw new Error(fatal.message);
  return (result?.messages ?? []).filter((m) => m.ruleId === 'boundaries/dependencies').map((m) => `${m.line}: ${m.message}`);
}

describe('lint boundaries', () => {
  it('refuses a relative import of another package and an import against the layer order', async () => {
    const probe = [
      "import { parseRuntimeConfig } from '../../config/src/parseRuntimeConfig.ts';",
      "import { ToolRuntime } from '@trellis/runtime';",
      'export const probe = [parseRuntimeConfig, ToolRuntime];',
      '',
    ].join('\n');
    expect(await boundaryMessages('packages/registry/src/boundaryProbe.ts', probe)).toEqual([
      "1: Import the workspace package by name, never another package's files by relative path.",
      '2: @trellis/registry may import only @trellis/sdk, @trellis/config (the layer order in docs/architecture.md).',
    ]);
  }, 120_000);

  it('refuses a plugin importing another plugin or a host package', async () => {
    const probe = [
      "import { plugin as other } from '@trellis/plugin-core-fs';",
      "import { ToolRuntime } from '@trellis/runtime';",
      'export const probe = [other, ToolRuntime];',
      '',
    ].join('\n');
    const messages = await boundaryMessages('plugins/core-web/src/boundaryProbe.ts', probe);
    expect(messages).toEqual([
      '1: @trellis/plugin may import only @trellis/sdk (the layer order in docs/architecture.md).',
      '2: @trellis/plugin may import only @trellis/sdk (the layer order in docs/architecture.md).',
    ]);
  }, 120_000);

  it('lets a package import its own files and the layers below it by name', async () => {
    const probe = [
      "import { loadRuntimeConfig } from '@trellis/config';",
      "import { containsPath } from './containsPath.ts';",
      'export const probe = [loadRuntimeConfig, containsPath];',
      '',
    ].join('\n');
    expect(await boundaryMessages('packages/registry/src/boundaryProbe.ts', probe)).toEqual([]);
  }, 120_000);
});

describe('the sdk subpaths', () => {
  it('lets a bundled plugin and a host package import @trellis/sdk/internal beside the plugin API', async () => {
    const probe = [
      "import { defineTool } from '@trellis/sdk';",
      "import { closestNames } from '@trellis/sdk/internal';",
      'export const probe = [defineTool, closestNames];',
      '',
    ].join('\n');
    expect(await boundaryMessages('plugins/core-web/src/boundaryProbe.ts', probe)).toEqual([]);
    expect(await boundaryMessages('packages/registry/src/boundaryProbe.ts', probe)).toEqual([]);
  }, 120_000);

  it('still holds the layer order when the import goes through a subpath', async () => {
    const probe = [
      "import { createProcessImplementation } from '@trellis/runtime/external';",
      'export const probe = [createProcessImplementation];',
      '',
    ].join('\n');
    expect(await boundaryMessages('plugins/core-web/src/boundaryProbe.ts', probe)).toEqual([
      '1: @trellis/plugin may import only @trellis/sdk (the layer order in docs/architecture.md).',
    ]);
  }, 120_000);
});
