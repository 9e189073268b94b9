#include "sim/prefix_cache.h"

#include <bit>
#include <utility>

#include "sim/check.h"

namespace llmcap::sim {

int64_t PrefixCache::acquire(int32_t e) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  if (entry.refcount++ > 0) return 0;
  unlink(e);
  evictable_blocks_ -= entry.num_blocks;
  return entry.num_blocks;
}

int64_t PrefixCache::release(int32_t e) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  LLMCAP_SIM_CHECK(entry.refcount > 0);
  if (--entry.refcount > 0) return 0;
  link_tail(e);
  evictable_blocks_ += entry.num_blocks;
  return entry.num_blocks;
}

int32_t PrefixCache::insert(uint64_t key, int64_t num_blocks, int64_t refcount) {
  int32_t e = 0;
  if (!free_slots_.empty()) {
    e = free_slots_.back();
    free_slots_.pop_back();
  } else {
    e = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
  }
  entries_[static_cast<size_t>(e)] = Entry{key, num_blocks, refcount, -1, -1};
  const bool added = index_.insert(key, e);
  LLMCAP_SIM_CHECK(added);
  if (refcount == 0) {
    link_tail(e);
    evictable_blocks_ += num_blocks;
  }
  return e;
}

int64_t PrefixCache::evict_lru() {
  LLMCAP_SIM_CHECK(head_ >= 0);
  return erase(head_);
}

int64_t PrefixCache::erase(int32_t e) {
  LLMCAP_SIM_CHECK(entries_[static_cast<size_t>(e)].refcount == 0);
  unlink(e);
  const Entry& entry = entries_[static_cast<size_t>(e)];
  evictable_blocks_ -= entry.num_blocks;
  const bool erased = index_.erase(entry.key);
  LLMCAP_SIM_CHECK(erased);
  free_slots_.push_back(e);
  return entry.num_blocks;
}

void PrefixCache::link_tail(int32_t e) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  entry.prev = tail_;
  entry.next = -1;
  if (tail_ >= 0) {
    entries_[static_cast<size_t>(tail_)].next = e;
  } else {
    head_ = e;
  }
  tail_ = e;
}

void PrefixCache::unlink(int32_t e) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  if (entry.prev >= 0) {
    entries_[static_cast<size_t>(entry.prev)].next = entry.next;
  } else {
    head_ = entry.next;
  }
  if (entry.next >= 0) {
    entries_[static_cast<size_t>(entry.next)].prev = entry.prev;
  } else {
    tail_ = entry.prev;
  }
  entry.prev = entry.next = -1;
}

// ---- KeyIndex -------------------------------------------------------------------------

/// Fibonacci hashing: the top bits of key x 2^64 / golden ratio (the keys are mixed already;
/// this spreads any that are not).
size_t PrefixCache::KeyIndex::home(uint64_t key) const {
  const int shift = 64 - std::countr_zero(slots_.size());
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift);
}

int32_t PrefixCache::KeyIndex::find(uint64_t key) const {
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t i = home(key);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.value < 0) return -1;
    if (slot.key == key) return slot.value;
  }
}

bool PrefixCache::KeyIndex::insert(uint64_t key, int32_t value) {
  LLMCAP_SIM_CHECK(value >= 0);
  if (8 * (size_ + 1) > static_cast<int64_t>(slots_.size())) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = home(key);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.value < 0) {
      slot = Slot{key, value};
      ++size_;
      return true;
    }
    if (slot.key == key) return false;
  }
}

bool PrefixCache::KeyIndex::erase(uint64_t key) {
  if (slots_.empty()) return false;
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  while (slots_[i].value >= 0 && slots_[i].key != key) i = (i + 1) & mask;
  if (slots_[i].value < 0) return false;
  // Backward shift: move later members of the probe run into the hole when the hole lies on
  // their path from home, so every key stays reachable without tombstones.
  for (size_t j = (i + 1) & mask; slots_[j].value >= 0; j = (j + 1) & mask) {
    const size_t h = home(slots_[j].key);
    const bool hole_on_path = ((j - h) & mask) >= ((j - i) & mask);
    if (hole_on_path) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
  --size_;
  return true;
}

void PrefixCache::KeyIndex::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
  size_ = 0;
  for (const Slot& slot : old) {
    if (slot.value >= 0) insert(slot.key, slot.value);
  }
}

}  // namespace llmcap::sim
