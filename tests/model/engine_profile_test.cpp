// Engine profiles: every shipped profile read and used (efficiency, per-kernel cost), and each
// bad input with its message.
#include "model/engine_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "model/roofline.h"
#include "predictor_fixtures.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;

/// A step's time is a sum of double terms: adding the kernels' cost moves it by that much up
/// to rounding.
constexpr double kSumTolerance_s = 1e-12;

const std::string kProfile = R"({
  "id": "e", "name": "E", "version": "1", "device_kind": "gpu",
  "scheduler": {"policy": "chunked_prefill", "max_num_seqs": 64, "max_num_batched_tokens": 512,
                "source": "s", "as_of": "2026"},
  "step_overhead_s": {"value": 0.001, "source": "s", "as_of": "2026"},
  "kernel_overhead_s": {"value": 1e-5, "source": "s", "as_of": "2026"},
  "memory_bandwidth_fraction": {"value": 0.9, "source": "s", "as_of": "2026"},
  "compute_fraction": {"value": 0.5, "source": "s", "as_of": "2026"},
  "usable_memory_fraction": {"value": 0.85, "source": "s", "as_of": "2026"}
})";

std::string load_error(const std::string& text, const std::string& name = "e.json") {
  TempDir dir;
  const auto file = dir.write(name, text);
  return llmcap::testing::error_message<base::InputError>([&] { load_engine_profile(file); });
}

TEST(EngineProfile, EveryShippedProfileReadsWithSourcesAndAPolicy) {
  const auto engines = load_engine_profiles(llmcap::testing::data_dir());
  for (const char* id : {"vllm", "sglang", "tensorrt-llm", "llama.cpp-cuda", "llama.cpp",
                         "vllm-cpu", "sglang-cpu", "neural-speed"}) {
    ASSERT_EQ(engines.count(id), 1u) << id;
    const EngineProfile& e = engines.at(id);
    for (const SourcedFigure* f :
         {&e.step_overhead_s, &e.kernel_overhead_s, &e.memory_bandwidth_fraction,
          &e.compute_fraction, &e.usable_memory_fraction}) {
      EXPECT_FALSE(f->source.empty()) << id;
      EXPECT_THAT(f->source, ::testing::Not(HasSubstr("PENDING"))) << id;
      EXPECT_FALSE(f->as_of.empty()) << id;
    }
    EXPECT_FALSE(e.scheduler.source.empty()) << id;
    if (e.decode_compute_fraction.value > 0) {
      EXPECT_FALSE(e.decode_compute_fraction.source.empty()) << id;
      EXPECT_FALSE(e.decode_compute_fraction.as_of.empty()) << id;
    }
    EXPECT_GT(e.scheduler.max_num_seqs, 0) << id;
    if (e.kind == DeviceKind::kCpu) EXPECT_FALSE(e.cpu_path_source.empty()) << id;
  }
  EXPECT_EQ(engines.at("vllm").scheduler.policy, "chunked_prefill");
  EXPECT_EQ(engines.at("vllm").scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(engines.at("sglang-cpu").cpu_path, InstructionPath::kAmx);
  EXPECT_EQ(engines.at("llama.cpp").cpu_path, InstructionPath::kAvx512);
}

TEST(EngineProfile, ItsFiguresReplaceTheDefaultsAndEachKernelCostsItsOverhead) {
  TempDir dir;
  const EngineProfile e = load_engine_profile(dir.write("e.json", kProfile));
  const Efficiency base = default_efficiency(DeviceKind::kGpu);
  const Efficiency eff = engine_efficiency(e, base);
  EXPECT_EQ(eff.step_overhead_s, 0.001);
  EXPECT_EQ(eff.kernel_overhead_s, 1e-5);
  EXPECT_EQ(eff.memory_bandwidth_fraction, 0.9);
  EXPECT_EQ(eff.compute_fraction, 0.5);
  EXPECT_EQ(eff.usable_memory_fraction, 0.85);
  EXPECT_EQ(eff.link_bandwidth_fraction, base.link_bandwidth_fraction);

  // Per layer of the small model: 2 norms, attention, the fused QKV call, the output
  // projection, the MLP's gate/up call, its down call and its activation = 8 kernels; 2 layers
  // and the embedding, final norm and LM head: 19 kernels of 10 us each.
  const ModelSpec m = testing::tiny_model();
  Efficiency no_kernels = eff;
  no_kernels.kernel_overhead_s = 0;
  const RooflinePredictor with(m, WeightFormat::kBf16, KvFormat::kBf16, testing::cpu_deployment(),
                               eff);
  const RooflinePredictor without(m, WeightFormat::kBf16, KvFormat::kBf16,
                                  testing::cpu_deployment(), no_kernels);
  BatchShape decode;
  decode.num_decode_seqs = 4;
  decode.num_decode_context_tokens = 4 * 300;
  EXPECT_NEAR(with.step_time_s(decode) - without.step_time_s(decode), 19 * 1e-5, kSumTolerance_s);
}

TEST(EngineProfile, DecodeOnlyStepsPriceTheirComputeAtTheDecodeFraction) {
  const ModelSpec m = testing::tiny_model();
  Efficiency e = default_efficiency(DeviceKind::kCpu);
  e.compute_fraction = 0.5;
  Efficiency with_decode = e;
  with_decode.decode_compute_fraction = 0.05;  // 10x slower compute in decode-only steps
  // A deployment so slow at compute that a decode of 64 sequences is compute-bound everywhere.
  Deployment d = testing::cpu_deployment();
  d.memory_bandwidth_bytes_per_s = 1e15;
  d.peak_flops_per_s = {{"bf16", 1e9}, {"f32", 1e9}};
  const RooflinePredictor plain(m, WeightFormat::kBf16, KvFormat::kBf16, d, e);
  const RooflinePredictor decode(m, WeightFormat::kBf16, KvFormat::kBf16, d, with_decode);
  BatchShape step;
  step.num_decode_seqs = 64;
  step.num_decode_context_tokens = 64 * 10;
  const double overhead_s = e.step_overhead_s;
  EXPECT_NEAR(decode.step_time_s(step) - overhead_s, 10 * (plain.step_time_s(step) - overhead_s),
              1e-9 * plain.step_time_s(step));
  // A step with prefill tokens keeps the prefill fraction.
  BatchShape prefill;
  prefill.num_prefill_seqs = 1;
  prefill.num_prefill_tokens = 64;
  prefill.num_prefill_attention_pairs = 64 * 65 / 2;
  prefill.num_prefill_seqs_completing = 1;
  EXPECT_DOUBLE_EQ(decode.step_time_s(prefill), plain.step_time_s(prefill));
}

TEST(EngineProfile, BadFieldsAreNamedWithTheValueAndWhatWasExpected) {
  using llmcap::testing::replace_once;
  EXPECT_THAT(load_error(replace_once(kProfile, R"("chunked_prefill")", R"("fifo")")),
              HasSubstr(R"(field "scheduler.policy": expected one of static, continuous, )"
                        R"(chunked_prefill, prefill_first, got "fifo")"));
  EXPECT_THAT(load_error(replace_once(kProfile, R"("value": 0.9,)", R"("value": 1.5,)")),
              HasSubstr(R"(field "memory_bandwidth_fraction.value": expected a fraction in )"
                        R"((0, 1], got 1.5)"));
  EXPECT_THAT(load_error(replace_once(kProfile, R"("value": 0.001,)", R"("value": -1,)")),
              HasSubstr(R"(field "step_overhead_s.value": expected a non-negative number of )"
                        R"(seconds, got -1)"));
  EXPECT_THAT(load_error(replace_once(kProfile, R"("max_num_batched_tokens": 512)",
                                      R"("max_num_batched_tokens": 32)")),
              HasSubstr(R"(field "scheduler.max_num_batched_tokens": expected at least )"
                        R"(max_num_seqs (64) with chunked_prefill, got 32)"));
  EXPECT_THAT(
      load_error(replace_once(kProfile, R"("device_kind": "gpu")", R"("device_kind": "cpu")")),
      HasSubstr(R"(field "cpu_path": missing; a CPU engine names the instruction path of )"
                R"(its matrix products (amx, avx512, avx2))"));
  EXPECT_THAT(load_error(replace_once(kProfile, R"("name": "E",)",
                                      R"("name": "E", "cpu_path": {"value": "amx"},)")),
              HasSubstr(R"(field "cpu_path": only CPU engines have an instruction path)"));
  EXPECT_THAT(load_error(kProfile, "other.json"),
              HasSubstr(R"(field "id": expected the file's name without .json ("other"), )"
                        R"(got "e")"));
  EXPECT_THAT(load_error(replace_once(kProfile, R"("name": "E",)", R"("name": "E", "gpus": 1,)")),
              HasSubstr(R"(field "gpus": unknown; known fields: id, name)"));
  EXPECT_THAT(load_error(replace_once(kProfile,
                                      R"("source": "s", "as_of": "2026"},
  "kernel_overhead_s")",
                                      R"("as_of": "2026"},
  "kernel_overhead_s")")),
              HasSubstr(R"(field "step_overhead_s.source")"));
}

TEST(EngineProfile, UnknownEngineListsTheKnownOnes) {
  const Catalog catalog = Catalog::load(llmcap::testing::data_dir());
  EXPECT_NE(catalog.find_engine("vllm"), nullptr);
  EXPECT_THAT(llmcap::testing::error_message<base::InputError>(
                  [&] { find_engine(catalog, "tgi", "scenario.json: field \"engine\""); }),
              HasSubstr(R"(scenario.json: field "engine": unknown engine "tgi"; known: )"
                        R"(llama.cpp, llama.cpp-cuda, neural-speed, sglang, sglang-cpu, )"
                        R"(tensorrt-llm, vllm, vllm-cpu)"));
}

}  // namespace
}  // namespace llmcap::model

namespace llmcap::model {
namespace {

void expect_same_figure(const SourcedFigure& a, const SourcedFigure& b, const std::string& what) {
  EXPECT_EQ(a.value, b.value) << what;
  EXPECT_EQ(a.source, b.source) << what;
  EXPECT_EQ(a.as_of, b.as_of) << what;
}

TEST(EngineProfile, EveryShippedProfileWrittenAsJsonReadsBackTheSame) {
  for (const auto& [id, e] : load_engine_profiles(llmcap::testing::data_dir())) {
    TempDir dir;
    const EngineProfile back =
        load_engine_profile(dir.write(id + ".json", engine_profile_to_json(e)));
    EXPECT_EQ(back.name, e.name) << id;
    EXPECT_EQ(back.kind, e.kind) << id;
    EXPECT_EQ(back.scheduler.policy, e.scheduler.policy) << id;
    EXPECT_EQ(back.scheduler.max_num_batched_tokens, e.scheduler.max_num_batched_tokens) << id;
    expect_same_figure(back.step_overhead_s, e.step_overhead_s, id);
    expect_same_figure(back.kernel_overhead_s, e.kernel_overhead_s, id);
    expect_same_figure(back.memory_bandwidth_fraction, e.memory_bandwidth_fraction, id);
    expect_same_figure(back.compute_fraction, e.compute_fraction, id);
    expect_same_figure(back.decode_compute_fraction, e.decode_compute_fraction, id);
    expect_same_figure(back.usable_memory_fraction, e.usable_memory_fraction, id);
    expect_same_figure(back.frontend_latency_s, e.frontend_latency_s, id);
    EXPECT_EQ(back.cpu_path, e.cpu_path) << id;
    EXPECT_EQ(back.cpu_path_source, e.cpu_path_source) << id;
    EXPECT_TRUE(back.hardware.empty()) << id;
  }
}

TEST(EngineProfile, AFittedProfileNamesItsHardwareAndFitAndMayBeNamedAnyhow) {
  EngineProfile e = load_engine_profiles(llmcap::testing::data_dir()).at("vllm");
  e.hardware = "h100-sxm";
  const nlohmann::ordered_json fit = {{"summary", "fitted to 12 figures"}, {"runs", 5}};
  TempDir dir;
  const EngineProfile back =
      load_engine_profile(dir.write("my-h100-fit.json", engine_profile_to_json(e, fit)));
  EXPECT_EQ(back.id, "vllm");
  EXPECT_EQ(back.hardware, "h100-sxm");
  EXPECT_EQ(back.fit_summary, "fitted to 12 figures");
}

TEST(EngineProfile, AFrontEndLatencyIsOptionalAndNonNegative) {
  TempDir dir;
  EXPECT_EQ(load_engine_profile(dir.write("e.json", kProfile)).frontend_latency_s.value, 0.0);
  std::string with = kProfile;
  with.insert(with.rfind('}'),
              R"(, "frontend_latency_s": {"value": 0.004, "source": "s", "as_of": "2026"})");
  EXPECT_EQ(load_engine_profile(dir.write("e.json", with)).frontend_latency_s.value, 0.004);
  std::string negative = kProfile;
  negative.insert(negative.rfind('}'),
                  R"(, "frontend_latency_s": {"value": -1, "source": "s", "as_of": "2026"})");
  EXPECT_THAT(load_error(negative), HasSubstr("frontend_latency_s.value"));
  EXPECT_THAT(load_error(negative), HasSubstr("a non-negative number of seconds"));
}

TEST(EngineProfile, AFitWithoutHardwareIsRefused) {
  std::string text = kProfile;
  text.insert(text.rfind('}'), R"(, "fit": {"summary": "x"})");
  EXPECT_THAT(load_error(text), HasSubstr("\"hardware\""));
  EXPECT_THAT(load_error(text),
              HasSubstr("a fitted profile (one with \"fit\") names its hardware"));
}

}  // namespace
}  // namespace llmcap::model
