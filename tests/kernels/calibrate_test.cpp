#include "kernels/calibrate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace llmcap::kernels {
namespace {

TEST(RunCalibration, TestSweepTimesEveryKernelAndFormatWithConsistentRates) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 1;
  int progress_lines = 0;
  o.progress = [&](const std::string&) { ++progress_lines; };
  const CalibrationRun run = run_calibration(o);
  EXPECT_EQ(run.sweep, "test");
  EXPECT_EQ(run.max_threads, 1);
  EXPECT_GT(progress_lines, 0);
  EXPECT_EQ(run.machine.read_bandwidth_bytes_per_s.count(1), 1u);
  std::set<std::string> matmul_formats, attention_formats, ops;
  for (const KernelSample& s : run.samples) {
    ops.insert(s.op);
    if (s.op == "matmul") matmul_formats.insert(s.format);
    if (s.op == "attention") attention_formats.insert(s.format);
    EXPECT_EQ(s.backend, "llmcap");
    EXPECT_EQ(s.threads, 1);
    EXPECT_GT(s.median_s, 0) << s.op << " " << s.format;
    EXPECT_LE(s.min_s, s.median_s);
    EXPECT_GT(s.bytes, 0);
    EXPECT_DOUBLE_EQ(s.bytes_per_s, s.bytes / s.median_s);
    EXPECT_DOUBLE_EQ(s.flops_per_s, s.flops / s.median_s);
    EXPECT_TRUE(s.cache_resident);
    if (s.op == "matmul") {
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * s.rows * s.cols * s.batch);
      EXPECT_GE(s.bytes, s.rows * s.cols * 0.5625);
    }
  }
  EXPECT_EQ(ops,
            (std::set<std::string>{"matmul", "attention", "rms_norm", "swiglu", "moe_matmul"}));
  EXPECT_EQ(matmul_formats, (std::set<std::string>{"f32", "bf16", "int8", "int4"}));
  EXPECT_EQ(attention_formats, (std::set<std::string>{"f32", "bf16"}));
}

TEST(RunCalibration, ExtraShapesAreTimedOnceInTheirFormats) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 1;
  // 96x320 in int8 only (listed twice, once more with int4: the union of formats, once each);
  // 40x72 in every format but int4 (72 columns are not whole blocks of 32: skipped, said).
  o.extra_matmul_shapes = {{96, 320, {WeightFormat::kInt8}},
                           {40, 72, {}},
                           {96, 320, {WeightFormat::kInt8, WeightFormat::kInt4}}};
  std::string skipped;
  o.progress = [&](const std::string& line) {
    if (line.find("skipped") != std::string::npos) skipped += line;
  };
  const CalibrationRun run = run_calibration(o);
  EXPECT_EQ(skipped, "matmul int4 40x72 skipped: int4 needs cols a multiple of 32");
  std::multiset<std::string> formats_96, formats_40;
  std::set<int64_t> batches;
  for (const KernelSample& s : run.samples) {
    if (s.op != "matmul") continue;
    if (s.rows == 96 && s.cols == 320) formats_96.insert(s.format);
    if (s.rows == 40 && s.cols == 72) {
      formats_40.insert(s.format);
      batches.insert(s.batch);
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * 40 * 72 * s.batch);
    }
  }
  // The test sweep's batches are 1 and 4: one sample per format and batch.
  EXPECT_EQ(formats_96, (std::multiset<std::string>{"int4", "int4", "int8", "int8"}));
  EXPECT_EQ(formats_40, (std::multiset<std::string>{"bf16", "bf16", "f32", "f32", "int8", "int8"}));
  EXPECT_EQ(batches, (std::set<int64_t>{1, 4}));
}

TEST(RunCalibration, APrefillBatchIsTimedOnceAtTheLargestThreadCount) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 2;
  // 48x64 with a prefill batch of 24 in int8, listed again with 40: the larger is kept.
  o.extra_matmul_shapes = {{48, 64, {WeightFormat::kInt8}, 24},
                           {48, 64, {WeightFormat::kInt8}, 40}};
  std::string said;
  o.progress = [&](const std::string& line) {
    if (line.find("a prefill") != std::string::npos) said += line;
  };
  const CalibrationRun run = run_calibration(o);
  EXPECT_EQ(said, "matmul int8 48x64 at 40 rows (a prefill), activations x 1 copies");
  std::multiset<int64_t> batches;
  int threads = 0;
  for (const KernelSample& s : run.samples) {
    if (s.op != "matmul" || s.rows != 48 || s.cols != 64) continue;
    threads = std::max(threads, s.threads);
    if (s.batch == 40) {
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * 48 * 64 * 40);
      EXPECT_GT(s.median_s, 0.0);
      EXPECT_EQ(s.threads, run.max_threads);
    }
    batches.insert(s.batch);
  }
  // The test sweep's batches 1 and 4 at each thread count, and 40 once.
  EXPECT_EQ(batches.count(40), 1u);
  EXPECT_EQ(batches.count(24), 0u);
  EXPECT_EQ(threads, run.max_threads);
}

TEST(RunCalibration, AttentionCellsAreAlsoTimedSpreadOverTheLargestThreadCount) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 2;
  const CalibrationRun run = run_calibration(o);
  if (run.max_threads < 2) GTEST_SKIP() << "one CPU: no spread to time";
  // Every attention cell at the largest thread count has a spread twin: same layout, context,
  // bytes and flops; with one thread there is nothing to spread.
  int alone = 0, spread = 0;
  for (const KernelSample& a : run.samples) {
    if (a.op == "attention_spread") {
      ++spread;
      EXPECT_EQ(a.threads, run.max_threads);
      EXPECT_GT(a.median_s, 0.0);
    }
    if (a.op != "attention" || a.threads != run.max_threads) continue;
    ++alone;
    const auto twin =
        std::find_if(run.samples.begin(), run.samples.end(), [&](const KernelSample& s) {
          return s.op == "attention_spread" && s.format == a.format && s.rows == a.rows &&
                 s.cols == a.cols && s.batch == a.batch;
        });
    ASSERT_NE(twin, run.samples.end()) << a.format << " " << a.rows << "x" << a.cols;
    EXPECT_DOUBLE_EQ(twin->bytes, a.bytes);
    EXPECT_DOUBLE_EQ(twin->flops, a.flops);
  }
  EXPECT_GT(alone, 0);
  EXPECT_EQ(spread, alone);
}

TEST(RunCalibration, ANegativePrefillBatchIsRefused) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.extra_matmul_shapes = {{48, 64, {}, -2}};
  try {
    run_calibration(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("extra matmul shape 48x64: prefill_batch -2, expected >= 0"),
        std::string::npos)
        << e.what();
  }
}

TEST(RunCalibration, AnEmptyExtraShapeIsRefusedWithItsSize) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.extra_matmul_shapes = {{0, 64, {}}};
  try {
    run_calibration(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("extra matmul shape 0x64: expected rows and cols >= 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(RunCalibration, ExtraAttentionLayoutsAreTimedInBothKvTypes) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 1;
  // 12/4 x 32 is new; 32/8 x 128 is one of the test sweep's own and is not timed twice.
  o.extra_attention_layouts = {{12, 4, 32}, {32, 8, 128}};
  const CalibrationRun run = run_calibration(o);
  std::multiset<std::string> new_layout;
  int sweep_layout = 0;
  for (const KernelSample& s : run.samples) {
    if (s.op != "attention") continue;
    if (s.rows == 4 * 32 && s.batch == 12) new_layout.insert(s.format);
    if (s.rows == 8 * 128 && s.batch == 32) ++sweep_layout;
  }
  // The test sweep's two contexts (64, 256) and the short 16 and 32, each KV type.
  EXPECT_EQ(new_layout, (std::multiset<std::string>{"bf16", "bf16", "bf16", "bf16", "f32", "f32",
                                                    "f32", "f32"}));
  EXPECT_EQ(sweep_layout, 4);
}

TEST(ExtraLayoutContexts, AddTheStepsOfTheKernelUpToTheSweepsLargest) {
  EXPECT_EQ(detail::extra_layout_contexts({128, 2048, 8192}),
            (std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(detail::extra_layout_contexts({128, 512, 2048, 8192}),
            (std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(detail::extra_layout_contexts({64, 256}), (std::vector<int64_t>{16, 32, 64, 256}));
  EXPECT_EQ(detail::extra_layout_contexts({}), (std::vector<int64_t>{}));
}

TEST(RunCalibration, AnAttentionLayoutWithUnsharedHeadsIsRefused) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.extra_attention_layouts = {{6, 4, 64}};
  try {
    run_calibration(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("extra attention layout 6/4x64: expected positive sizes "
                                         "and query heads a multiple of KV heads"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShapeTimer, EachRoundTimesEveryCellAndSamplesKeepTheirMedians) {
  ShapeTimingOptions o;
  o.matmul_shapes = {{96, 320, {WeightFormat::kInt8, WeightFormat::kInt4}},
                     {40, 72, {WeightFormat::kBf16}}};
  o.batches = {1, 3};
  o.attention_layouts = {{8, 2, 32}};
  o.contexts = {17, 41};
  o.size = SweepSize::kTest;
  ThreadPool pool(1);
  ShapeTimer timer(o, pool);
  EXPECT_EQ(timer.rounds(), 0);
  EXPECT_TRUE(timer.samples().empty());
  timer.round();
  timer.round();
  EXPECT_EQ(timer.rounds(), 2);
  const std::vector<KernelSample> samples = timer.samples();
  // (2 formats + 1) x 2 batches of products, 1 layout x 1 KV type x 2 contexts of attention.
  ASSERT_EQ(samples.size(), 8u);
  std::set<std::string> cells;
  for (const KernelSample& s : samples) {
    cells.insert(s.op + " " + s.format + " " + std::to_string(s.rows) + "x" +
                 std::to_string(s.cols) + " b" + std::to_string(s.batch));
    EXPECT_EQ(s.threads, 1);
    EXPECT_GT(s.median_s, 0);
    EXPECT_LE(s.min_s, s.median_s);
    EXPECT_DOUBLE_EQ(s.bytes_per_s, s.bytes / s.median_s);
    EXPECT_TRUE(s.cache_resident);  // the test sweep keeps everything in the caches
    if (s.op == "matmul") {
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * s.rows * s.cols * s.batch);
    } else {
      // K and V of 2 heads x 32 dims in bf16, q and out of 8 heads in f32.
      EXPECT_DOUBLE_EQ(s.bytes, 2.0 * 2 * s.cols * 32 * 2 + 2.0 * 4 * 8 * 32);
    }
  }
  EXPECT_EQ(cells, (std::set<std::string>{"matmul int8 96x320 b1", "matmul int8 96x320 b3",
                                          "matmul int4 96x320 b1", "matmul int4 96x320 b3",
                                          "matmul bf16 40x72 b1", "matmul bf16 40x72 b3",
                                          "attention bf16 64x17 b8", "attention bf16 64x41 b8"}));
}

TEST(ShapeTimer, RoundSamplesGiveEachRoundsOwnMedianInTheSameCellOrder) {
  ShapeTimingOptions o;
  o.matmul_shapes = {{96, 320, {WeightFormat::kInt8}}};
  o.batches = {1};
  o.attention_layouts = {{8, 2, 32}};
  o.contexts = {17};
  o.size = SweepSize::kTest;
  ThreadPool pool(1);
  ShapeTimer timer(o, pool);
  for (int r = 0; r < 3; ++r) timer.round();
  const std::vector<KernelSample> all = timer.samples();
  std::vector<std::vector<KernelSample>> rounds;
  for (int r = 0; r < 3; ++r) rounds.push_back(timer.round_samples(r));
  for (size_t i = 0; i < all.size(); ++i) {
    std::vector<double> medians;
    for (const auto& round : rounds) {
      ASSERT_EQ(round.size(), all.size());
      EXPECT_EQ(round[i].op, all[i].op);
      EXPECT_EQ(round[i].cols, all[i].cols);
      EXPECT_EQ(round[i].min_s, all[i].min_s);  // the fastest run of any round
      EXPECT_GE(round[i].median_s, all[i].min_s);
      EXPECT_DOUBLE_EQ(round[i].bytes_per_s, round[i].bytes / round[i].median_s);
      medians.push_back(round[i].median_s);
    }
    // samples() takes the median of the three rounds' medians.
    std::sort(medians.begin(), medians.end());
    EXPECT_DOUBLE_EQ(all[i].median_s, medians[1]) << all[i].op;
  }
}

TEST(ShapeTimer, RoundSamplesOfARoundNotTakenAreRefused) {
  ShapeTimingOptions o;
  o.matmul_shapes = {{40, 72, {WeightFormat::kBf16}}};
  o.batches = {1};
  o.size = SweepSize::kTest;
  ThreadPool pool(1);
  ShapeTimer timer(o, pool);
  timer.round();
  try {
    (void)timer.round_samples(1);
    FAIL() << "round 1 of 1 was accepted";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "ShapeTimer::round_samples: round 1, expected 0..0 (1 rounds taken)");
  }
  EXPECT_THROW((void)timer.round_samples(-1), std::out_of_range);
}

TEST(ShapeTimer, WithSeveralThreadsEachAttentionCellIsAlsoTimedSpreadOverThem) {
  ShapeTimingOptions o;
  o.attention_layouts = {{8, 2, 32}};
  o.contexts = {17, 41};
  o.size = SweepSize::kTest;
  ThreadPool pool(2);
  ShapeTimer timer(o, pool);
  timer.round();
  const std::vector<KernelSample> samples = timer.samples();
  ASSERT_EQ(samples.size(), 4u);
  for (const int64_t context : {17, 41}) {
    const auto find = [&](const std::string& op) {
      const auto it = std::find_if(samples.begin(), samples.end(), [&](const KernelSample& s) {
        return s.op == op && s.cols == context;
      });
      EXPECT_NE(it, samples.end()) << op << " at " << context;
      return it == samples.end() ? KernelSample{} : *it;
    };
    const KernelSample alone = find("attention"), spread = find("attention_spread");
    EXPECT_EQ(spread.format, "bf16");
    EXPECT_EQ(spread.rows, 64);
    EXPECT_EQ(spread.batch, 8);
    EXPECT_EQ(spread.threads, 2);
    // Per call: the bytes and flops of one call, a time of its own.
    EXPECT_DOUBLE_EQ(spread.bytes, alone.bytes);
    EXPECT_DOUBLE_EQ(spread.flops, alone.flops);
    EXPECT_GT(spread.median_s, 0);
    EXPECT_LE(spread.min_s, spread.median_s);
  }
}

TEST(ShapeTimer, CellsItCannotTimeAreRefusedWithTheReason) {
  ThreadPool pool(1);
  const auto message = [&](const ShapeTimingOptions& o) {
    try {
      ShapeTimer timer(o, pool);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ShapeTimingOptions int4;
  int4.size = SweepSize::kTest;
  int4.matmul_shapes = {{40, 72, {WeightFormat::kInt4}}};
  int4.batches = {1};
  EXPECT_EQ(message(int4), "ShapeTimer: matmul int4 40x72: int4 needs cols a multiple of 32");
  ShapeTimingOptions empty = int4;
  empty.matmul_shapes = {{0, 64, {WeightFormat::kInt8}}};
  EXPECT_EQ(message(empty), "ShapeTimer: matmul shape 0x64, expected rows and cols >= 1");
  ShapeTimingOptions batch = int4;
  batch.matmul_shapes = {{40, 64, {WeightFormat::kInt8}}};
  batch.batches = {0};
  EXPECT_EQ(message(batch), "ShapeTimer: batch 0, expected >= 1");
  ShapeTimingOptions layout;
  layout.size = SweepSize::kTest;
  layout.attention_layouts = {{6, 4, 64}};
  layout.contexts = {16};
  EXPECT_EQ(message(layout),
            "ShapeTimer: attention layout 6/4x64: expected positive sizes and query heads a "
            "multiple of KV heads");
  ShapeTimingOptions context = layout;
  context.attention_layouts = {{8, 4, 64}};
  context.contexts = {0};
  EXPECT_EQ(message(context), "ShapeTimer: context 0, expected >= 1");
}

TEST(ScatteredOrder, IsAFixedPermutationThatLeavesAddressOrder) {
  const std::vector<std::size_t> order = detail::scattered_order(1000);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i);  // a permutation
  EXPECT_EQ(order, detail::scattered_order(1000));                          // the same each run
  int neighbours = 0;  // steps to the next copy in address order
  for (std::size_t i = 0; i + 1 < order.size(); ++i) neighbours += order[i + 1] == order[i] + 1;
  EXPECT_LT(neighbours, 10);
  EXPECT_EQ(detail::scattered_order(1), std::vector<std::size_t>{0});
  EXPECT_TRUE(detail::scattered_order(0).empty());
}

TEST(RunCalibration, RejectsNegativeThreads) {
  CalibrationOptions o;
  o.max_threads = -1;
  EXPECT_THROW(run_calibration(o), std::invalid_argument);
}

TEST(RunCalibration, ExpertGroupedProductsAreReportedInInt8AndInt4) {
  ThreadPool pool(1);
  const detail::MoeSweep sweep = detail::moe_sweep(SweepSize::kTest);
  int lines = 0;
  const std::vector<KernelSample> samples =
      detail::time_moe_matmul(SweepSize::kTest, pool, 2, 0, [&](const std::string&) { ++lines; });
  EXPECT_EQ(lines, 2);  // one per format
  ASSERT_EQ(samples.size(), 2 * sweep.tokens.size());
  std::set<std::string> formats;
  for (const KernelSample& s : samples) {
    formats.insert(s.format);
    EXPECT_EQ(s.op, "moe_matmul");
    EXPECT_EQ(s.rows, sweep.rows);
    EXPECT_EQ(s.cols, sweep.cols);
    EXPECT_GT(s.median_s, 0);
    EXPECT_LE(s.min_s, s.median_s);
    EXPECT_DOUBLE_EQ(s.flops, 2.0 * s.batch * sweep.k * sweep.rows * sweep.cols);
    // The experts hit: k for one token, at most all of them (plus the activations).
    const double one_expert = static_cast<double>(PackedWeights::bytes_for(
        s.format == "int8" ? WeightFormat::kInt8 : WeightFormat::kInt4, sweep.rows, sweep.cols));
    const double activations = 4.0 * static_cast<double>(s.batch * (sweep.rows + sweep.cols));
    if (s.batch == 1) {
      EXPECT_DOUBLE_EQ(s.bytes, sweep.k * one_expert + activations);
    }
    EXPECT_LE(s.bytes, static_cast<double>(sweep.experts) * one_expert + activations);
  }
  EXPECT_EQ(formats, (std::set<std::string>{"int8", "int4"}));
}

}  // namespace
}  // namespace llmcap::kernels
