import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.gen.ts', '**/coverage/**', 'examples/**/*.py'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
        setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly',
        Buffer: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly',
        TextEncoder: 'readonly', structuredClone: 'readonly', fetch: 'readonly', queueMicrotask: 'readonly',
        performance: 'readonly', Response: 'readonly', Request: 'readonly', Headers: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(fs|path|os|child_process|crypto|url|util|events|stream|net|http|https|dns|worker_threads|readline|tty|zlib|assert|module|process|timers)(/.*)?$', message: 'Use the node: protocol for built-ins.' },
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
    files: ['packages/*/src/**/*.ts', 'plugins/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['**/*.config.ts', '**/*.config.js', 'eslint.config.js', 'vitest.shared.ts', 'tsup.shared.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
