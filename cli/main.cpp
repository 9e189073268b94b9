#include <iostream>

#include "base/memory.h"
#include "cli/cli.h"

int main(int argc, char** argv) {
  llmcap::base::keep_freed_memory_for_reuse();  // a plan runs hundreds of simulations
  return llmcap::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
