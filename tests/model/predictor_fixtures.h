// Fixtures of the predictor tests (calibration, calibrated predictor): a small model whose
// costs can be worked by hand and a CPU deployment with round rates.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "model/deployment.h"
#include "model/model_spec.h"
#include "model/step_time.h"

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

/// The batches of a run of `steps` decode steps as the simulator's decode run-ahead prices
/// them (DecodeRunPricer): `seqs` sequences of `context_per_seq` tokens, each
/// step's context one token (plus `drafts` verified drafts) longer per sequence.
inline std::vector<BatchShape> decode_run(int64_t seqs, int64_t context_per_seq, int64_t steps,
                                          int64_t drafts = 0) {
  std::vector<BatchShape> out;
  for (int64_t i = 0; i < steps; ++i) {
    BatchShape b;
    b.num_decode_seqs = seqs;
    b.num_decode_context_tokens = seqs * (context_per_seq + i * (1 + drafts));
    b.num_decode_draft_tokens = seqs * drafts;
    b.num_decode_draft_attention_pairs =
        drafts * b.num_decode_context_tokens + seqs * drafts * (drafts + 1) / 2;
    out.push_back(b);
  }
  return out;
}

/// Whether p's DecodeRunPricer, started at batches[0], prices each batch exactly (bit for bit)
/// as p.step_time_s does; twice over, the second run started anew.
inline ::testing::AssertionResult prices_each_step_alike(const StepTimePredictor& p,
                                                         const std::vector<BatchShape>& batches) {
  const std::unique_ptr<DecodeRunPricer> pricer = p.decode_run_pricer();
  for (int round = 0; round < 2; ++round) {
    if (!batches.empty()) pricer->start(batches[0]);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      const double run_s = pricer->step_time_s(batches[i]);
      const double one_s = p.step_time_s(batches[i]);
      if (run_s != one_s) {
        return ::testing::AssertionFailure()
               << "round " << round << ", batch " << i << " of " << batches.size()
               << ": the run's pricer " << run_s << " s, step_time_s " << one_s << " s";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace llmcap::model::testing
