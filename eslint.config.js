import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

// The layer order (ARCHITECTURE.md): a package may import only the layers listed for it, by package
// name. Tests and benches may use @trellis/testing as well.
const LAYERS = {
  sdk: [],
  config: ['sdk'],
  registry: ['sdk', 'config'],
  catalog: ['sdk', 'config', 'registry'],
  runtime: ['sdk', 'config', 'registry', 'catalog'],
  agent: ['sdk', 'config', 'registry', 'catalog', 'runtime'],
  'mcp-server': ['sdk', 'config', 'registry', 'catalog', 'runtime'],
  testing: ['sdk', 'config', 'registry', 'catalog', 'runtime'],
  plugin: ['sdk'],
  app: ['sdk', 'config', 'registry', 'catalog', 'runtime', 'agent', 'mcp-server', 'plugin'],
};
const root = import.meta.dirname;

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.gen.ts', '**/coverage/**', '**/.tmp/**', '**/.cache/**', 'examples/**/*.py'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['*.ts'] }, tsconfigRootDir: root } },
  },
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        structuredClone: 'readonly',
        fetch: 'readonly',
        queueMicrotask: 'readonly',
        performance: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(fs|path|os|child_process|crypto|url|util|events|stream|net|http|https|dns|worker_threads|readline|tty|zlib|assert|module|process|timers)(/.*)?$',
              message: 'Use the node: protocol for built-ins.',
            },
            { regex: '^\\.\\./\\.\\./(packages|plugins|apps)/', message: 'Import the workspace package, never its src/ by relative path.' },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
        { selector: 'ExportAllDeclaration', message: 'List exports explicitly; never `export *`.' },
      ],
    },
  },
  {
    // Layer boundaries: who may import whom, and never another package's files by relative path.
    files: ['packages/*/{src,test}/**/*.ts', 'plugins/*/{src,test}/**/*.ts', 'apps/*/{src,test,scripts}/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': {
        typescript: {
          alwaysTryTypes: true,
          project: [`${root}/packages/*/tsconfig.json`, `${root}/plugins/*/tsconfig.json`, `${root}/apps/*/tsconfig.json`],
          noWarnOnMultipleProjects: true,
        },
      },
      'boundaries/elements': [
        { type: 'package', pattern: 'packages/*', capture: ['name'] },
        { type: 'plugin', pattern: 'plugins/*', capture: ['name'] },
        { type: 'app', pattern: 'apps/*', capture: ['name'] },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'allow',
          policies: [
            {
              // Within a package, anything; across packages, only by package name.
              disallow: {
                to: { element: { captured: { name: '!{{ from.element.captured.name }}' } } },
                dependency: { source: '!@trellis/**' },
              },
              message: "Import the workspace package by name, never another package's files by relative path.",
            },
            ...Object.entries(LAYERS).map(([layer, allowed]) => ({
              from:
                layer === 'plugin'
                  ? { element: { type: 'plugin' } }
                  : layer === 'app'
                    ? { element: { type: 'app' } }
                    : { element: { type: 'package', captured: { name: layer } } },
              disallow: {
                to: [
                  {
                    element: {
                      type: 'package',
                      captured: {
                        name: `!{${[...allowed.filter((a) => a !== 'plugin' && a !== 'app'), 'testing', 'test-support', layer].join(',')}}`,
                      },
                    },
                  },
                  ...(allowed.includes('plugin')
                    ? []
                    : [
                        {
                          element: { type: 'plugin', captured: { name: layer === 'plugin' ? '*' : '*' } },
                          dependency: { source: '@trellis/plugin-*' },
                        },
                      ]),
                ],
              },
              message: `@trellis/${layer} may import only ${allowed.map((a) => `@trellis/${a}`).join(', ') || 'no other Trellis package'} (the layer order in docs/architecture.md).`,
            })),
          ],
        },
      ],
    },
  },
  {
    files: ['packages/*/src/**/*.ts', 'plugins/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['**/*.config.ts', '**/*.config.js', 'eslint.config.js', 'vitest.shared.ts', 'tsup.shared.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
  },
);
