#include "kernels/elementwise.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/dispatch.h"
#include "kernels/elementwise_internal.h"

namespace llmcap::kernels {

namespace detail {

void rms_norm_scalar(const float* x, const float* weight, int64_t rows, int64_t dim, float eps,
                     float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += double(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / dim + eps));
    for (int64_t i = 0; i < dim; ++i) o[i] = xr[i] * inv * weight[i];
  }
}

void rope_scalar(float* x, int64_t heads, int64_t head_dim, int64_t half, const float* cos,
                 const float* sin) {
  for (int64_t h = 0; h < heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float x0 = xh[i], x1 = xh[i + half];
      xh[i] = x0 * cos[i] - x1 * sin[i];
      xh[i + half] = x0 * sin[i] + x1 * cos[i];
    }
  }
}

void swiglu_scalar(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void to_bf16_scalar(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(x[i]);
}

}  // namespace detail

namespace {

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

}  // namespace

void rms_norm(std::span<const float> x, std::span<const float> weight, int64_t dim, float eps,
              std::span<float> out, Isa isa) {
  const char* op = "rms_norm";
  if (dim < 1) fail(op, "dim must be >= 1, got " + std::to_string(dim));
  if (static_cast<int64_t>(weight.size()) != dim) {
    fail(op, "weight.size() (" + std::to_string(weight.size()) + ") != dim (" +
                 std::to_string(dim) + ")");
  }
  if (x.size() % dim != 0) {
    fail(op, "x.size() (" + std::to_string(x.size()) + ") is not a multiple of dim (" +
                 std::to_string(dim) + ")");
  }
  if (out.size() != x.size()) {
    fail(op, "out.size() (" + std::to_string(out.size()) + ") != x.size() (" +
                 std::to_string(x.size()) + ")");
  }
  if (!(eps >= 0) || !std::isfinite(eps)) {
    fail(op, "eps must be finite and >= 0, got " + std::to_string(eps));
  }
  const KernelTable& k = kernel_table(isa, op);
  k.rms_norm(x.data(), weight.data(), static_cast<int64_t>(x.size()) / dim, dim, eps, out.data());
}

void rope(std::span<float> x, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
          int64_t position, float theta, Isa isa) {
  const char* op = "rope";
  if (num_heads < 0) fail(op, "num_heads must be >= 0, got " + std::to_string(num_heads));
  if (head_dim < 1) fail(op, "head_dim must be >= 1, got " + std::to_string(head_dim));
  if (static_cast<int64_t>(x.size()) != num_heads * head_dim) {
    fail(op, "x.size() (" + std::to_string(x.size()) + ") != num_heads * head_dim (" +
                 std::to_string(num_heads) + " * " + std::to_string(head_dim) + ")");
  }
  if (rotary_dim < 2 || rotary_dim % 2 != 0 || rotary_dim > head_dim) {
    fail(op, "rotary_dim (" + std::to_string(rotary_dim) +
                 ") must be even, >= 2 and <= head_dim (" + std::to_string(head_dim) + ")");
  }
  if (position < 0) fail(op, "position must be >= 0, got " + std::to_string(position));
  if (!(theta > 0) || !std::isfinite(theta)) {
    fail(op, "theta must be finite and > 0, got " + std::to_string(theta));
  }
  const KernelTable& k = kernel_table(isa, op);

  // cos/sin of position * theta^(-2i/rotary_dim), cached for the next call at the same position
  // (q and k of every layer share it).
  struct Table {
    int64_t position = -1, rotary_dim = 0;
    float theta = 0;
    std::vector<float> cos, sin;
  };
  thread_local Table table;
  const int64_t half = rotary_dim / 2;
  if (table.position != position || table.rotary_dim != rotary_dim || table.theta != theta) {
    table.cos.resize(half);
    table.sin.resize(half);
    for (int64_t i = 0; i < half; ++i) {
      const double freq = std::pow(double(theta), -2.0 * double(i) / double(rotary_dim));
      const double angle = double(position) * freq;
      table.cos[i] = static_cast<float>(std::cos(angle));
      table.sin[i] = static_cast<float>(std::sin(angle));
    }
    table.position = position;
    table.rotary_dim = rotary_dim;
    table.theta = theta;
  }
  if (num_heads == 0) return;
  k.rope(x.data(), num_heads, head_dim, half, table.cos.data(), table.sin.data());
}

void swiglu(std::span<const float> gate, std::span<const float> up, std::span<float> out, Isa isa) {
  const char* op = "swiglu";
  if (gate.size() != up.size() || out.size() != gate.size()) {
    fail(op, "gate.size() (" + std::to_string(gate.size()) + "), up.size() (" +
                 std::to_string(up.size()) + ") and out.size() (" + std::to_string(out.size()) +
                 ") must be equal");
  }
  const KernelTable& k = kernel_table(isa, op);
  k.swiglu(gate.data(), up.data(), out.data(), static_cast<int64_t>(gate.size()));
}

void convert_to_bf16(std::span<const float> x, std::span<uint16_t> out, Isa isa) {
  const char* op = "convert_to_bf16";
  if (out.size() != x.size()) {
    fail(op, "out.size() (" + std::to_string(out.size()) + ") != x.size() (" +
                 std::to_string(x.size()) + ")");
  }
  const KernelTable& k = kernel_table(isa, op);
  k.to_bf16(x.data(), out.data(), static_cast<int64_t>(x.size()));
}

}  // namespace llmcap::kernels
