// Placeholder: filled by the helper building this module.
#include <gtest/gtest.h>
