// Placeholder: filled by the helper building this command.
#include <gtest/gtest.h>
