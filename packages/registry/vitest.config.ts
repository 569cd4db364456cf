import { mergeConfig } from 'vitest/config';
import { sharedVitest } from '../../vitest.shared.ts';

export default mergeConfig(sharedVitest, { test: { setupFiles: ['./test/setup.ts'] } });
