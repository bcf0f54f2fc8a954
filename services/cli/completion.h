#ifndef GPUADVISOR_SERVICES_CLI_COMPLETION_H_
#define GPUADVISOR_SERVICES_CLI_COMPLETION_H_

// Shell completion scripts for gpu-advisor (`gpu-advisor completion bash|zsh`),
// written from the commands and flags the binary itself defines, so a flag
// generated from a new contract field completes without a change here.
//   bash:  source <(gpu-advisor completion bash)
//   zsh:   source <(gpu-advisor completion zsh)   (or save it as _gpu-advisor
//          on $fpath)

#include <string>
#include <utility>
#include <vector>

namespace gpuadvisor::cli {

struct CompletionCommand {
  std::string name;                // "recommend"
  std::string description;         // one line, for zsh's menu
  std::vector<std::string> flags;  // "--model", "--task", ...
  // Flag -> the values it takes (enums: "--task" -> {"lora", "qlora", ...}).
  std::vector<std::pair<std::string, std::vector<std::string>>> values;
};

// `global_flags` complete before the command and after it.
std::string BashCompletion(const std::vector<CompletionCommand>& commands,
                           const std::vector<std::string>& global_flags);
std::string ZshCompletion(const std::vector<CompletionCommand>& commands,
                          const std::vector<std::string>& global_flags);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_COMPLETION_H_
