import { beforeAll } from 'vitest';
import { prepareRegistry } from '../src/index.ts';

// Unit tests call discovery, admission and decision directly: load every lazy dependency first.
beforeAll(() => prepareRegistry());
