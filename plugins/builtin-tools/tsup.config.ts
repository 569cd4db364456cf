import { defineConfig } from 'tsup';
import { sharedTsup } from '../../tsup.shared.ts';

export default defineConfig({ ...sharedTsup, entry: ['src/index.ts', 'src/code.ts'] });
