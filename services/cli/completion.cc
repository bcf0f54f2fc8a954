#include "services/cli/completion.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace gpuadvisor::cli {
namespace {

// Flag names and values are [A-Za-z0-9_.-]; descriptions are quoted.
std::string SingleQuoted(const std::string& text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

std::string ValueCases(const CompletionCommand& c, const std::string& indent) {
  std::string out;
  for (const auto& [flag, values] : c.values) {
    absl::StrAppend(&out, indent, flag, ") values=\"", absl::StrJoin(values, " "), "\" ;;\n");
  }
  return out;
}

}  // namespace

std::string BashCompletion(const std::vector<CompletionCommand>& commands,
                           const std::vector<std::string>& global_flags) {
  std::vector<std::string> names;
  for (const CompletionCommand& c : commands) names.push_back(c.name);
  std::string out =
      "# bash completion for gpu-advisor: source <(gpu-advisor completion bash)\n"
      "_gpu_advisor() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in -* | =) ;; *)\n"
      "      [[ ${COMP_WORDS[i-1]} == = ]] && continue\n"
      "      cmd=${COMP_WORDS[i]}; break ;;\n"
      "    esac\n"
      "  done\n"
      "  # --flag=value: bash splits the word at '=' (COMP_WORDBREAKS).\n"
      "  local flag=\n"
      "  if [[ $cur == = ]]; then flag=$prev; cur=;\n"
      "  elif [[ $prev == = ]]; then flag=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
      "  if [[ -n $flag ]]; then\n"
      "    local values=\n"
      "    case $cmd in\n";
  for (const CompletionCommand& c : commands) {
    if (c.values.empty()) continue;
    absl::StrAppend(&out, "      ", c.name, ")\n        case $flag in\n",
                    ValueCases(c, "          "), "        esac ;;\n");
  }
  absl::StrAppend(&out,
                  "    esac\n"
                  "    COMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n"
                  "    return\n"
                  "  fi\n"
                  "  local words\n"
                  "  case $cmd in\n");
  for (const CompletionCommand& c : commands) {
    absl::StrAppend(&out, "    ", c.name, ") words=\"", absl::StrJoin(c.flags, " "), "\" ;;\n");
  }
  absl::StrAppend(&out, "    *) words=\"", absl::StrJoin(names, " "), " ",
                  absl::StrJoin(global_flags, " "),
                  "\" ;;\n"
                  "  esac\n"
                  "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
                  "}\n"
                  "complete -o default -F _gpu_advisor gpu-advisor\n");
  return out;
}

std::string ZshCompletion(const std::vector<CompletionCommand>& commands,
                          const std::vector<std::string>& global_flags) {
  std::string out =
      "#compdef gpu-advisor\n"
      "# zsh completion for gpu-advisor: source <(gpu-advisor completion zsh), or save it as\n"
      "# _gpu-advisor in a directory on $fpath.\n"
      "_gpu_advisor() {\n"
      "  local -a commands flags values\n"
      "  local cmd= w\n"
      "  commands=(\n";
  for (const CompletionCommand& c : commands) {
    absl::StrAppend(&out, "    ", SingleQuoted(absl::StrCat(c.name, ":", c.description)), "\n");
  }
  absl::StrAppend(&out,
                  "  )\n"
                  "  for w in ${words[2,CURRENT-1]}; do\n"
                  "    [[ $w == -* ]] || { cmd=$w; break; }\n"
                  "  done\n"
                  "  if [[ $PREFIX == --*=* ]]; then\n"
                  "    local flag=${PREFIX%%=*}\n"
                  "    case $cmd in\n");
  for (const CompletionCommand& c : commands) {
    if (c.values.empty()) continue;
    absl::StrAppend(&out, "      ", c.name, ")\n        case $flag in\n");
    for (const auto& [flag, values] : c.values) {
      absl::StrAppend(&out, "          ", flag, ") values=(", absl::StrJoin(values, " "), ") ;;\n");
    }
    absl::StrAppend(&out, "        esac ;;\n");
  }
  absl::StrAppend(&out,
                  "    esac\n"
                  "    compset -P '*='\n"
                  "    compadd -a values\n"
                  "    return\n"
                  "  fi\n"
                  "  case $cmd in\n");
  for (const CompletionCommand& c : commands) {
    absl::StrAppend(&out, "    ", c.name, ") flags=(", absl::StrJoin(c.flags, " "), ") ;;\n");
  }
  absl::StrAppend(&out, "    *)\n      flags=(", absl::StrJoin(global_flags, " "),
                  ")\n"
                  "      [[ $PREFIX == -* ]] || { _describe command commands; return; } ;;\n"
                  "  esac\n"
                  "  compadd -- $flags\n"
                  "}\n"
                  "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
                  "  _gpu_advisor \"$@\"\n"
                  "else\n"
                  "  compdef _gpu_advisor gpu-advisor\n"
                  "fi\n");
  return out;
}

}  // namespace gpuadvisor::cli
