// Regenerates schema/runtime.schema.json from the zod schema: `pnpm --filter @trellis/config schema`.
import { writeFileSync } from 'node:fs';
import { runtimeConfigJsonSchema } from '../src/runtimeConfigJsonSchema.ts';

const target = new URL('../schema/runtime.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(runtimeConfigJsonSchema(), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
