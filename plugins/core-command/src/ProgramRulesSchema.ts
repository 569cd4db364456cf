import { z } from 'zod';

/** One argument pattern of a program rule (see docs/plugins/core-command.md, "Argument rules"). */
const ArgPatternSchema = z.string().min(1).max(256);

const ArgPatternListSchema = z.array(ArgPatternSchema).max(1000);

/** A program name as rules are keyed: the bare name, e.g. "git". */
export const PROGRAM_NAME_PATTERN = /^[A-Za-z0-9._+-]{1,255}$/;

/**
 * `[runtime.tools.command.programs.<name>]`: argument rules for one program. Each key given
 * replaces the shipped default for that key (`subcommand_deny_args` one subcommand at a time);
 * keys left out keep the default.
 */
export const ProgramRulesSchema = z
  .object({
    has_subcommands: z
      .boolean()
      .optional()
      .describe(
        'Whether the program is called as "<program> [global options] <subcommand> [arguments]" (git, docker, cargo). Only then do deny_global_args, path_args and global_args_with_value look before the subcommand alone and subcommand_deny_args apply; otherwise they look at every argument. Default false for your own programs.',
      ),
    deny_args: ArgPatternListSchema.optional().describe(
      'Arguments refused wherever they appear. "--name" also refuses its "--name=value" form and git-style abbreviations ("--upload-p"); "-x" (one letter) also refuses "-xVALUE" and bundles such as "-qx"; a pattern with * or ? is a glob over the whole argument (case-insensitive); anything else must match exactly.',
    ),
    deny_global_args: ArgPatternListSchema.optional().describe(
      'Arguments refused before the subcommand (the first argument that is not an option), e.g. git\'s "-c" but not "git grep -c"; every argument when has_subcommands is false.',
    ),
    global_args_with_value: ArgPatternListSchema.optional().describe(
      'Options before the subcommand that take the next argument as their value (git "-C <path>"), so the subcommand is found correctly.',
    ),
    subcommand_deny_args: z
      .record(z.string().min(1).max(255), ArgPatternListSchema)
      .optional()
      .describe('Per subcommand: arguments refused after it. "*" refuses every argument, i.e. the subcommand with any arguments.'),
    path_args: ArgPatternListSchema.optional().describe(
      'Options whose value is a path that must stay inside the workspace ("-C", "--git-dir"): as "-C <path>", "-C<path>" or "--git-dir=<path>".',
    ),
  })
  .strict();

/** A program's rules as written in runtime.toml. */
export type ProgramRulesInput = z.infer<typeof ProgramRulesSchema>;

/** `[runtime.tools.command] programs`: rules per program name. */
export const ProgramRulesMapSchema = z
  .record(z.string().regex(PROGRAM_NAME_PATTERN, 'must be a bare program name such as "git"'), ProgramRulesSchema)
  .default({})
  .describe(
    'Argument rules per program, keyed by bare program name ("git"). Rules apply when the program run, the path it was found at or its realpath has that name. Git, rg and find ship with rules (see docs/plugins/core-command.md); a key given here replaces that key of the shipped rules.',
  );
