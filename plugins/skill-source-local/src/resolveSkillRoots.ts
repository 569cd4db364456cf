import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** Where a skill root comes from, in priority order. */
export type SkillRootSource = 'workspace' | 'user' | 'configured';

/** One place skills are looked for. */
export interface SkillRoot {
  readonly source: SkillRootSource;
  /** Absolute, not yet realpath'd. */
  readonly path: string;
}

/** What `resolveSkillRoots` needs. */
export interface ResolveSkillRootsOptions {
  /** The workspace root, absolute. */
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `[runtime.tools.skills] paths`. */
  readonly paths: readonly string[];
}

/**
 * The skill roots in priority order (first wins on a name clash): `<workspace>/.trellis/skills`,
 * `$XDG_CONFIG_HOME/trellis/skills` (else `~/.config/trellis/skills`), then each configured path,
 * relative ones resolved against the workspace.
 */
export function resolveSkillRoots(options: ResolveSkillRootsOptions): SkillRoot[] {
  const xdg = options.env.XDG_CONFIG_HOME;
  const configHome = xdg !== undefined && isAbsolute(xdg) ? xdg : join(options.env.HOME ?? homedir(), '.config');
  return [
    { source: 'workspace', path: join(options.workspace, '.trellis', 'skills') },
    { source: 'user', path: join(configHome, 'trellis', 'skills') },
    ...options.paths.map((p): SkillRoot => ({ source: 'configured', path: resolve(options.workspace, p) })),
  ];
}
