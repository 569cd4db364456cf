// Regenerates schema/plugin.schema.json from the zod schema: `pnpm --filter @trellis/sdk schema`.
import { writeFileSync } from 'node:fs';
import { pluginManifestJsonSchema } from '../src/pluginManifestJsonSchema.ts';

const target = new URL('../schema/plugin.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(pluginManifestJsonSchema(), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
