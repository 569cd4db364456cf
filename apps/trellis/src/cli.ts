#!/usr/bin/env node
import { main, processIO } from './main.ts';

// No top-level await: this entry is built as CommonJS (see tsup.config.ts).
void main(process.argv.slice(2), processIO()).then((code) => {
  process.exitCode = code;
});
