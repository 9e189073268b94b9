#include "sim/length_model.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_reader.h"
#include "sim/input_error.h"

namespace llmcap::sim {
namespace {

constexpr double kMaxTokens = 16777216;  // 2^24, the bound of every token count (docs/model.md)

/// The quantile points of `key` ({"quantiles": [[p, tokens], ...]}), checked.
LengthQuantiles read_quantiles(const base::JsonReader& r, const std::string& key,
                               double min_tokens) {
  const base::JsonReader q = r.object(key);
  q.only({"mean", "quantiles"});
  if (q.has("mean")) (void)q.non_negative_number("mean");
  const nlohmann::json& points = q.array("quantiles", "a list of [probability, tokens] pairs");
  LengthQuantiles out;
  const std::string name = "quantiles";
  if (points.size() < 2) {
    q.fail(name, "at least two [probability, tokens] points (0 and 1)", q.shown(points));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const nlohmann::json& point = points[i];
    const std::string at = name + "[" + std::to_string(i) + "]";
    if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number()) {
      q.fail(at, "a [probability, tokens] pair of numbers", q.shown(point));
    }
    const double p = point[0].get<double>();
    const double tokens = point[1].get<double>();
    const double last_p = out.points.empty() ? -1 : out.points.back().first;
    const double last_tokens = out.points.empty() ? min_tokens : out.points.back().second;
    if (!(p > last_p) || p < 0 || p > 1 || (i == 0 && p != 0) ||
        (i + 1 == points.size() && p != 1)) {
      q.fail(at, "probabilities rising strictly from 0 (the first) to 1 (the last)",
             q.shown(point));
    }
    if (!(tokens >= last_tokens) || tokens > kMaxTokens) {
      q.fail(at,
             "token counts that do not fall, in [" + std::to_string(static_cast<int>(min_tokens)) +
                 ", 16777216]",
             q.shown(point));
    }
    out.points.emplace_back(p, tokens);
  }
  return out;
}

}  // namespace

double LengthQuantiles::at(double p) const {
  if (points.empty()) return 0;
  if (p <= points.front().first) return points.front().second;
  for (size_t i = 1; i < points.size(); ++i) {
    const auto& [p1, v1] = points[i];
    if (p <= p1) {
      const auto& [p0, v0] = points[i - 1];
      return v0 + (v1 - v0) * (p - p0) / (p1 - p0);
    }
  }
  return points.back().second;
}

LengthModel read_length_model(const std::filesystem::path& path) {
  const std::string file = path.string();
  const nlohmann::json doc = base::read_json_file(path);
  if (!doc.is_object()) throw InputError::bad_document(file, "a length model (a JSON object)");
  const base::JsonReader r(doc, file, "");
  r.only({"format", "id", "description", "source", "as_of", "method", "num_requests", "span_s",
          "arrivals", "prompt_tokens", "output_tokens"});
  if (r.string("format") != "llmcap-length-model") {
    r.fail("format", "\"llmcap-length-model\"", r.got("format"));
  }
  LengthModel m;
  m.id = r.non_empty_string("id");
  m.source = r.non_empty_string("source");
  m.as_of = r.non_empty_string("as_of");
  if (r.has("arrivals")) {
    const base::JsonReader a = r.object("arrivals");
    a.only({"rate_per_s", "interarrival_cv"});
    (void)a.positive_number("rate_per_s");
    (void)a.positive_number("interarrival_cv");
  }
  m.prompt_tokens = read_quantiles(r, "prompt_tokens", 1);
  m.output_tokens = read_quantiles(r, "output_tokens", 0);
  return m;
}

std::vector<LengthSample> length_samples(const LengthModel& model, int64_t n) {
  std::vector<LengthSample> samples;
  samples.reserve(static_cast<size_t>(std::max<int64_t>(n, 0)));
  const int64_t stride = n % 617 == 0 ? 1 : 617;  // 617 is prime: a permutation of 0..n-1
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = (stride * i) % n;
    const double u_prompt = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    const double u_output = (static_cast<double>(j) + 0.5) / static_cast<double>(n);
    LengthSample s;
    s.num_prompt_tokens = std::max<int64_t>(1, std::llround(model.prompt_tokens.at(u_prompt)));
    s.num_output_tokens = std::max<int64_t>(1, std::llround(model.output_tokens.at(u_output)));
    samples.push_back(s);
  }
  return samples;
}

bool is_length_model_path(const std::filesystem::path& path) { return path.extension() == ".json"; }

}  // namespace llmcap::sim
