/** A program's argument rules with every key filled in. */
export interface ProgramRules {
  readonly has_subcommands: boolean;
  readonly deny_args: readonly string[];
  readonly deny_global_args: readonly string[];
  readonly global_args_with_value: readonly string[];
  readonly subcommand_deny_args: Readonly<Record<string, readonly string[]>>;
  readonly path_args: readonly string[];
}

/** A shipped rule set, with why each pattern is refused (for the refusal message). */
export interface ShippedProgramRules extends ProgramRules {
  readonly reasons: Readonly<Record<string, string>>;
}

const RUNS_CONFIG = 'repository config can name commands (core.fsmonitor, core.hooksPath, core.pager, core.sshCommand, aliases with "!")';

/**
 * The argument rules core-command ships, for the programs its docs suggest allowing and for find.
 * Each refused argument makes the program run a command of the caller's choosing, or reach
 * outside the workspace. Users change them under `[runtime.tools.command.programs.<name>]`.
 */
export const SHIPPED_PROGRAM_RULES: Readonly<Record<string, ShippedProgramRules>> = {
  git: {
    has_subcommands: true,
    deny_args: ['--upload-pack', '--receive-pack', '--exec', 'ext::*', 'fd::*', '--template', '--config-env', '--exec-path'],
    deny_global_args: ['-c', '-p', '--paginate'],
    global_args_with_value: ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--attr-source'],
    subcommand_deny_args: {
      clone: ['-u', '-c', '--config'],
      'ls-remote': ['-u'],
      rebase: ['-x'],
      difftool: ['-x', '--extcmd'],
      grep: ['-O', '--open-files-in-pager'],
      bisect: ['run'],
      submodule: ['foreach'],
      config: ['*'],
      'filter-branch': ['*'],
      'send-email': ['*'],
      instaweb: ['*'],
      daemon: ['*'],
      hook: ['*'],
      credential: ['*'],
      'credential-store': ['*'],
      'credential-cache': ['*'],
    },
    path_args: ['-C', '--git-dir', '--work-tree'],
    reasons: {
      '--upload-pack':
        'it names the program git runs to serve a fetch, a clone or ls-remote; for a local or file:// remote that program runs here, through a shell',
      '--receive-pack': 'it names the program git runs to receive a push; for a local remote it runs here, through a shell',
      '--exec': 'it names a command git runs (rebase --exec runs it after every commit; archive and push run it as the remote program)',
      'ext::*': 'an ext:: remote URL is a shell command git runs to reach the "remote"',
      'fd::*': 'an fd:: remote URL talks git protocol over file descriptors the host never meant to hand out',
      '--template': 'a template folder is copied into the new repository, hooks included, and git runs those hooks later',
      '--config-env': `it sets any configuration value, and ${RUNS_CONFIG}`,
      '--exec-path': 'it changes the folder git runs its helper programs from',
      '-c': `it sets any configuration value for the call, and ${RUNS_CONFIG}; e.g. -c 'alias.x=!id' x runs id through a shell`,
      '-p': 'it forces the pager, which git runs through a shell from core.pager or PAGER',
      '--paginate': 'it forces the pager, which git runs through a shell from core.pager or PAGER',
      'clone -u': 'clone -u names the upload-pack program, which runs here for a local source',
      'clone -c': `clone -c writes configuration into the new repository, and ${RUNS_CONFIG} that later git calls run`,
      'clone --config': `clone --config writes configuration into the new repository, and ${RUNS_CONFIG} that later git calls run`,
      'ls-remote -u': 'ls-remote -u names the upload-pack program, which runs here for a local remote',
      'rebase -x': 'rebase -x runs a shell command after every commit',
      'difftool -x': "difftool -x runs a command of the caller's choosing on every file",
      'difftool --extcmd': "difftool --extcmd runs a command of the caller's choosing on every file",
      'grep -O': 'grep -O runs the given pager command on the matching files',
      'grep --open-files-in-pager': 'grep --open-files-in-pager runs the given pager command on the matching files',
      'bisect run': "bisect run runs a command of the caller's choosing at every step",
      'submodule foreach': 'submodule foreach runs a shell command in every submodule',
      'config *': `git config writes configuration, and ${RUNS_CONFIG}`,
      'filter-branch *': 'filter-branch runs its filters as shell commands',
      'send-email *': 'send-email runs commands from its options (--smtp-server, --to-cmd, --cc-cmd) and sends mail',
      'instaweb *': "instaweb starts a web server program of the caller's choosing",
      'daemon *': 'daemon serves repositories to the network and runs access hooks',
      'hook *': "hook run runs the repository's hooks",
      'credential *': "credential fill prints the user's stored passwords and tokens",
      'credential-store *': "credential-store prints the user's stored passwords and tokens",
      'credential-cache *': "credential-cache prints the user's cached passwords and tokens",
      '-C': "it runs git in another folder, with that repository's config and hooks",
      '--git-dir': 'it uses another repository, with its config and hooks',
      '--work-tree': 'it reads and writes files in another folder',
    },
  },
  rg: {
    has_subcommands: false,
    deny_args: ['--pre', '--hostname-bin'],
    deny_global_args: [],
    global_args_with_value: [],
    subcommand_deny_args: {},
    path_args: [],
    reasons: {
      '--pre': "it runs a command of the caller's choosing on every file searched",
      '--hostname-bin': "it runs a command of the caller's choosing to find the host name",
    },
  },
  find: {
    has_subcommands: false,
    deny_args: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'],
    deny_global_args: [],
    global_args_with_value: [],
    subcommand_deny_args: {},
    path_args: [],
    reasons: {
      '-exec': "it runs a command of the caller's choosing on every file found",
      '-execdir': "it runs a command of the caller's choosing on every file found",
      '-ok': "it runs a command of the caller's choosing on every file found",
      '-okdir': "it runs a command of the caller's choosing on every file found",
      '-delete': 'it deletes every file found, anywhere find is pointed',
      '-fprint': 'it writes a file anywhere the host user can',
      '-fprint0': 'it writes a file anywhere the host user can',
      '-fprintf': 'it writes a file anywhere the host user can',
      '-fls': 'it writes a file anywhere the host user can',
    },
  },
};
