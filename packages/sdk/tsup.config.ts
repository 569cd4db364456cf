import { defineConfig } from 'tsup';
import { sharedTsup } from '../../tsup.shared.ts';

export default defineConfig({
  ...sharedTsup,
  entry: ['src/index.ts', 'src/schema.ts', 'src/linearRegExp.ts', 'src/internal.ts'],
  dts: true,
});
