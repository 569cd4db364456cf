// Fails when a workspace package pins a version of an external dependency instead of using the
// pnpm catalog, so each shared dependency stays at one version across the workspace.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const problems = [];
const files = ['package.json'];
for (const group of ['packages', 'plugins', 'apps', 'examples']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group)) {
    const file = join(group, name, 'package.json');
    if (existsSync(file)) files.push(file);
  }
}
for (const file of files) {
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [dep, spec] of Object.entries(pkg[field] ?? {})) {
      if (spec === 'catalog:' || spec.startsWith('workspace:')) continue;
      problems.push(`${file}: ${field}.${dep} is "${spec}"; use "catalog:" and add the version to pnpm-workspace.yaml`);
    }
  }
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`catalog check: ${files.length} package.json files use one version per dependency`);
