/**
 * `cadre completion bash|zsh|fish`: shell completion generated from the command tree itself, so it
 * never lists a command that does not exist. Subcommands and options complete at every level; zsh
 * uses the bash script through bashcompinit.
 */
import type { Command, Option } from 'commander';

interface Node {
  path: string;
  subs: Array<{ name: string; description: string }>;
  options: string[];
}

function visible(cmd: Command): Command[] {
  return cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
}

function optionNames(cmd: Command, globals: readonly Option[]): string[] {
  const own = [...cmd.options, ...globals].flatMap((o) => [o.long, o.short].filter((x): x is string => !!x));
  return [...new Set([...own, '--help'])];
}

function nodes(program: Command): Node[] {
  const out: Node[] = [];
  const walk = (cmd: Command, path: string) => {
    out.push({ path, subs: visible(cmd).map((c) => ({ name: c.name(), description: c.description() })), options: optionNames(cmd, path === 'cadre' ? [] : program.options) });
    for (const c of visible(cmd)) walk(c, `${path} ${c.name()}`);
  };
  walk(program, 'cadre');
  return out;
}

export function bashCompletion(program: Command): string {
  const ns = nodes(program);
  const cases = (pick: (n: Node) => string) => ns.map((n) => `    "${n.path}") echo "${pick(n)}" ;;`).join('\n');
  return `# cadre completion for bash (and zsh through bashcompinit). Install:
#   bash: cadre completion bash > ~/.local/share/bash-completion/completions/cadre
#   zsh:  cadre completion zsh > "\${fpath[1]}/_cadre"   (or: source <(cadre completion zsh))
_cadre_subs() {
  case "$1" in
${cases((n) => n.subs.map((s) => s.name).join(' '))}
  esac
}
_cadre_opts() {
  case "$1" in
${cases((n) => n.options.join(' '))}
  esac
}
_cadre_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="cadre" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case " $(_cadre_subs "$path") " in *" $w "*) path="$path $w" ;; esac
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_cadre_opts "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_cadre_subs "$path")" -- "$cur"))
  fi
}
complete -F _cadre_complete cadre
`;
}

export function zshCompletion(program: Command): string {
  return `#compdef cadre
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program)}`;
}

export function fishCompletion(program: Command): string {
  const esc = (s: string) => s.replace(/'/g, "\\'").slice(0, 80);
  const lines = ['# cadre completion for fish. Install: cadre completion fish > ~/.config/fish/completions/cadre.fish', 'complete -c cadre -f'];
  for (const n of nodes(program)) {
    const parts = n.path.split(' ').slice(1);
    const cond = parts.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${parts.at(-1)}`;
    for (const s of n.subs) lines.push(`complete -c cadre -n '${cond}' -a '${s.name}' -d '${esc(s.description)}'`);
    for (const o of n.options.filter((x) => x.startsWith('--'))) lines.push(`complete -c cadre -n '${cond}' -l '${o.slice(2)}'`);
  }
  return `${lines.join('\n')}\n`;
}
