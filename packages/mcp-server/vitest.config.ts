import { sharedVitest } from '../../vitest.shared.ts';

export default sharedVitest;
