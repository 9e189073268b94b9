// Fixtures shared by the tests of the commands that run the reference decoder (validate,
// serve-bench): a tiny Llama-shaped model and a profile of this machine.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli/cli.h"
#include "test_util.h"

namespace llmcap::cli::testing {

/// config.json of a two-layer Llama-shaped model small enough to run in milliseconds.
inline constexpr const char* kTinyLlama = R"({"model_type": "llama", "hidden_size": 128,
  "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "vocab_size": 512, "max_position_embeddings": 2048,
  "tie_word_embeddings": true})";

/// A profile of this machine from the (fast, in-cache) test sweep, written into `dir`.
inline std::filesystem::path test_profile(const llmcap::testing::TempDir& dir) {
  const auto path = dir.path() / "profile.json";
  std::ostringstream out, err;
  EXPECT_EQ(run({"calibrate", "--test-sweep", "--threads", "1", "--out", path.string(), "--quiet"},
                out, err),
            kExitOk)
      << err.str();
  return path;
}

}  // namespace llmcap::cli::testing
