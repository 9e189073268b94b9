#include "gui/app.h"

int main(int argc, char** argv) { return llmcap::gui::run_app(argc, argv); }
