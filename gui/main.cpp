#include "base/memory.h"
#include "gui/app.h"

int main(int argc, char** argv) {
  llmcap::base::keep_freed_memory_for_reuse();  // each what-if runs tens of simulations
  return llmcap::gui::run_app(argc, argv);
}
