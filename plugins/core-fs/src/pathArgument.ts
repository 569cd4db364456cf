import { z } from 'zod';
import type { ToolContext } from '@trellis/sdk';
import type { ConfinedPath, FsRoot } from './confinePath.ts';
import { confinePath, resolveFsRoot } from './confinePath.ts';
import type { FsSettings } from './FsSettingsSchema.ts';

/** A path argument as every core-fs tool takes it. */
export function pathSchema(what: string) {
  return z
    .string()
    .min(1)
    .max(4096)
    .describe(
      `${what} Relative to the root (the workspace unless configured otherwise), e.g. "src/index.ts"; an absolute path must lie inside the root. ".." may not climb above the root and symlinks leading out of it are refused.`,
    );
}

/** Resolves the root and confines one path argument to it. */
export async function confineArgument(
  ctx: ToolContext<FsSettings>,
  argument: string,
  value: string,
): Promise<{ root: FsRoot; path: ConfinedPath }> {
  const root = await resolveFsRoot(ctx);
  return { root, path: await confinePath(root, argument, value) };
}
