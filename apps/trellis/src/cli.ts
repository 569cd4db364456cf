#!/usr/bin/env node
import { TRELLIS_VERSION } from './bundled.gen.ts';

process.stdout.write(`${TRELLIS_VERSION}\n`);
