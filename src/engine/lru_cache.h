// The most recently used entries of a small cache, most recent first: the plans a compiled
// model keeps per input shapes, and the specializations it keeps per input values. Not
// thread-safe: its owner locks around it.
#pragma once

#include <cstddef>
#include <list>
#include <utility>

namespace maxc {

template <typename Key, typename Value>
class LruCache {
 public:
  // The value under `key`, now the most recent; null when there is none.
  Value* find(const Key& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return &entries_.front().second;
    }
    return nullptr;
  }

  // Adds `value` as the most recent, dropping the least recent past `capacity`.
  void put(Key key, Value value, size_t capacity) {
    entries_.emplace_front(std::move(key), std::move(value));
    while (entries_.size() > capacity) entries_.pop_back();
  }

 private:
  std::list<std::pair<Key, Value>> entries_;
};

}  // namespace maxc
