#include "sim/prefix_cache.h"

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
  const bool added = index_.emplace(key, e).second;
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
  index_.erase(entry.key);
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

}  // namespace llmcap::sim
