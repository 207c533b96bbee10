// The types of graph values. The graph layer knows a device only as a DeviceRef (kind + id);
// the driver's Device objects live a floor down and never appear here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "graph/dim.h"

namespace maxc {

enum class DeviceKind : int32_t { kCpu = 0, kGpu = 1 };

struct DeviceRef {
  DeviceKind kind = DeviceKind::kCpu;
  int64_t id = 0;

  static DeviceRef cpu(int64_t id = 0) { return {DeviceKind::kCpu, id}; }
  static DeviceRef gpu(int64_t id = 0) { return {DeviceKind::kGpu, id}; }
  std::string to_string() const;  // "cpu:0", "gpu:1", like MAX's str(DeviceRef)
  friend bool operator==(const DeviceRef&, const DeviceRef&) = default;
};

// A tensor's type: element dtype, one Dim per axis, and the device it lives on.
// `is_buffer` marks MAX's BufferType (a mutable tensor ordered by chains, P1); no op accepts
// one yet, so it only flows through graph inputs and printing.
struct TensorType {
  DType dtype = DType::kInvalid;
  std::vector<Dim> dims;
  DeviceRef device;
  bool is_buffer = false;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool is_static() const;       // every dim is static
  Dim num_elements() const;     // the product of the dims
  std::string to_string() const;  // "tensor<[batch, 10], float32, cpu:0>"

  // INVALID_ARGUMENT unless the dtype is known, the device id is >= 0 and no static dim is
  // negative. `what` names the value in the message ("input 'x'").
  void validate(const std::string& what) const;

  friend bool operator==(const TensorType&, const TensorType&) = default;
};

std::ostream& operator<<(std::ostream& out, const DeviceRef& d);
std::ostream& operator<<(std::ostream& out, const TensorType& t);

}  // namespace maxc
