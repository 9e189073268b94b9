// A double-ended queue of request ids (a replica's waiting queue), internal to the simulator.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmcap::sim {

/// A double-ended queue of request ids on a growable ring buffer: after warm-up, pushes and
/// pops never allocate (std::deque allocates and frees chunks as it moves).
class IdDeque {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  int64_t front() const { return buffer_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & (buffer_.size() - 1);
    --size_;
  }
  void push_back(int64_t id) {
    grow_if_full();
    buffer_[(head_ + size_) & (buffer_.size() - 1)] = id;
    ++size_;
  }
  /// The i-th id from the front.
  int64_t at(size_t i) const { return buffer_[(head_ + i) & (buffer_.size() - 1)]; }
  /// Replaces the contents with `ids`, front first.
  void assign(const std::vector<int64_t>& ids) {
    size_ = 0;
    head_ = 0;
    for (const int64_t id : ids) push_back(id);
  }
  void push_front(int64_t id) {
    grow_if_full();
    head_ = (head_ + buffer_.size() - 1) & (buffer_.size() - 1);
    buffer_[head_] = id;
    ++size_;
  }

 private:
  void grow_if_full() {
    if (size_ < buffer_.size()) return;
    std::vector<int64_t> bigger(std::max<size_t>(16, buffer_.size() * 2));  // power of two
    for (size_t i = 0; i < size_; ++i) bigger[i] = buffer_[(head_ + i) & (buffer_.size() - 1)];
    buffer_.swap(bigger);
    head_ = 0;
  }
  std::vector<int64_t> buffer_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace llmcap::sim
