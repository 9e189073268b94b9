// Fixtures of the predictor tests (calibration, calibrated predictor): a small model whose
// costs can be worked by hand and a CPU deployment with round rates.
#pragma once

#include <cstdint>

#include "model/deployment.h"
#include "model/model_spec.h"

namespace llmcap::model::testing {

/// A small Llama-shaped model (2 layers, 8 query and 2 KV heads of 128).
inline ModelSpec tiny_model() {
  ModelSpec m;
  m.id = "tiny";
  m.hidden_size = 1024;
  m.intermediate_size = 4096;
  m.num_layers = 2;
  m.num_attention_heads = 8;
  m.num_kv_heads = 2;
  m.head_dim = 128;
  m.vocab_size = 32000;
  m.max_position_embeddings = 4096;
  return m;
}

/// A CPU with 100 GB/s, 1 bf16 TFLOP/s (0.5 f32) and 64 GiB.
inline Deployment cpu_deployment() {
  Deployment d;
  d.kind = DeviceKind::kCpu;
  d.memory_bandwidth_bytes_per_s = 100e9;
  d.peak_flops_per_s = {{"bf16", 1e12}, {"f32", 5e11}};
  d.memory_bytes = int64_t{64} << 30;
  return d;
}

}  // namespace llmcap::model::testing
