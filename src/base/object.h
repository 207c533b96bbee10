// Intrusively reference-counted objects. Every ABI handle is one of these: the handle
// pointer *is* the object, and the kind tag lets the ABI layer refuse a handle of the
// wrong kind instead of misreading it.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace maxc {

enum class ObjectKind : uint32_t {
  kDevice = 0x4d444556,  // "MDEV"
  kContext = 0x4d435458,
  kStorage = 0x4d53544f,
  kTensor = 0x4d54454e,
  kTensorList = 0x4d544c53,
  kBuffer = 0x4d425546,
  kGraph = 0x4d475250,
  kAttrs = 0x4d415454,
  kCompiledModel = 0x4d434d44,
  kModel = 0x4d4d444c,
  kTensorSpec = 0x4d545350,
  kWeights = 0x4d575453,  // "MWTS"
};

class Object {
 public:
  explicit Object(ObjectKind kind) : kind_(kind) {}
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  ObjectKind kind() const { return kind_; }
  void retain() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 protected:
  virtual ~Object() = default;

 private:
  mutable std::atomic<int64_t> refs_{1};
  const ObjectKind kind_;
};

// An owning pointer to an Object: copy retains, destruction releases.
template <typename T>
class Ref {
 public:
  Ref() = default;
  // Takes over one reference the caller already owns (e.g. from `new`).
  static Ref adopt(T* p) { return Ref(p); }
  // Adds a reference of its own.
  static Ref share(T* p) {
    if (p) p->retain();
    return Ref(p);
  }
  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->retain();
  }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  Ref(Ref<U> o) : p_(o.detach()) {}  // NOLINT: upcast
  Ref& operator=(Ref o) {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) p_->release();
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  // Gives up ownership of the reference without releasing it.
  T* detach() { return std::exchange(p_, nullptr); }

 private:
  explicit Ref(T* p) : p_(p) {}
  T* p_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>::adopt(new T(std::forward<Args>(args)...));
}

}  // namespace maxc
