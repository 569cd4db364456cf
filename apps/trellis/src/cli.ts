#!/usr/bin/env node
import { main, processIO } from './main.ts';

const code = await main(process.argv.slice(2), processIO());
process.exitCode = code;
