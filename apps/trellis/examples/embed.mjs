// A minimal host embedding Trellis: assemble, show the tools a model would see, call one, shut down.
// Run after a build: node apps/trellis/examples/embed.mjs  (a host of your own imports from 'trellis').
import { assemble } from '../dist/index.js';

const host = await assemble({ workspace: process.cwd() });
try {
  const tools = host.catalog.render('openai');
  console.log(`${tools.length} tools offered; first: ${tools[0]?.function.name}`);

  host.runtime.addHook((event) => {
    if (event.type === 'outcome') console.log(`hook: ${event.tool} → ${event.outcome.ok ? 'ok' : event.outcome.error.code}`);
  });

  const outcome = await host.runtime.invoke({ name: 'builtin-tools.echo', input: { hello: 'from a host' } });
  console.log(JSON.stringify(outcome));

  const missing = await host.runtime.invoke({ name: 'builtin-tools.ecko', input: {} });
  console.log(JSON.stringify(missing));
} finally {
  await host.dispose();
}
