// One replica's prefix cache (ServingConfig::prefix_caching; internal to the simulator): the
// units of computed KV kept by key, their reference counts, and the LRU order of those no
// sequence holds (evictable), as vLLM v1's KV cache manager keeps hashed blocks in its free
// queue until they are reused. The semantics, in full, are at simulate() (sim/simulator.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmcap::sim {

class PrefixCache {
 public:
  struct Entry {
    uint64_t key = 0;
    int64_t num_blocks = 0;  ///< blocks of the unit (its tokens / the replica's block size)
    int64_t refcount = 0;    ///< sequences holding it; 0: evictable, in the LRU list
    int32_t prev = -1;       ///< LRU links (evictable entries only)
    int32_t next = -1;
  };

  /// The entry of `key`, or -1.
  int32_t find(uint64_t key) const { return index_.find(key); }
  const Entry& entry(int32_t e) const { return entries_[static_cast<size_t>(e)]; }
  /// Blocks of the evictable entries (counted as free by KvCache::num_free_blocks).
  int64_t evictable_blocks() const { return evictable_blocks_; }
  /// Entries in the cache, held or evictable.
  int64_t size() const { return index_.size(); }

  /// A new claim on entry e. Returns the blocks that left the evictable pool (its blocks if
  /// it was evictable, else 0).
  int64_t acquire(int32_t e);
  /// Drops a claim on entry e. Returns the blocks that became evictable (its blocks if that
  /// was the last claim: it joins the LRU tail), else 0.
  int64_t release(int32_t e);
  /// Adds an entry for `key` (not in the cache) of `num_blocks` blocks with `refcount` claims
  /// (0: evictable, at the LRU tail). Returns its index.
  int32_t insert(uint64_t key, int64_t num_blocks, int64_t refcount);
  /// Removes the least recently freed evictable entry; returns its blocks. Requires
  /// evictable_blocks() > 0.
  int64_t evict_lru();
  /// The entry evict_lru() would remove, or -1 when none is evictable.
  int32_t lru_front() const { return head_; }
  /// Removes evictable entry e (refcount 0); returns its blocks.
  int64_t erase(int32_t e);
  /// Calls f(entry) for every entry, held or evictable, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    index_.for_each([&](int32_t e) { f(entries_[static_cast<size_t>(e)]); });
  }

 private:
  void link_tail(int32_t e);
  void unlink(int32_t e);

  std::vector<Entry> entries_;
  std::vector<int32_t> free_slots_;
  /// Entry by key: an open-addressing table (linear probing, at most an eighth full, deletion
  /// by backward shift), as a cache lookup and an eviction per block reference are the prefix
  /// cache's hot path and a node-based map allocates per entry. An eighth rather than a half:
  /// short probe runs make lookups and erases (which scan the run after the hole) about 12%
  /// faster on prefix_sim_bench for 128 bytes of table per entry instead of 32
  /// (docs/measurements/prefix-caching.md).
  class KeyIndex {
   public:
    int32_t find(uint64_t key) const;
    /// Adds key -> value (value >= 0); returns false (and changes nothing) if key is present.
    bool insert(uint64_t key, int32_t value);
    /// Removes key; returns whether it was present.
    bool erase(uint64_t key);
    int64_t size() const { return size_; }
    template <typename F>
    void for_each(F&& f) const {
      for (const Slot& slot : slots_) {
        if (slot.value >= 0) f(slot.value);
      }
    }

   private:
    struct Slot {
      uint64_t key = 0;
      int32_t value = -1;  ///< -1: empty
    };
    size_t home(uint64_t key) const;
    void grow();
    std::vector<Slot> slots_;  ///< a power of two in size (or empty)
    int64_t size_ = 0;
  };
  KeyIndex index_;
  int32_t head_ = -1;
  int32_t tail_ = -1;
  int64_t evictable_blocks_ = 0;
};

}  // namespace llmcap::sim
