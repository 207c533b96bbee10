// The weights a model binds by name (MAX's weights registry): tensors from safetensors and
// GGUF files, mapped and never copied where alignment allows, and tensors added from memory
// (host buffers, DLPack imports). Names keep the order in which they were added.
//
// Ownership: a tensor handed out by tensor() keeps its file's mapping alive on its own, so it
// may outlive the registry. Added tensors are shared, not copied.
//
// Thread-safety: after the registry is filled, any number of threads may call the const
// members at once. add_* mutate it and need external synchronization against every other
// call. References returned by info() stay valid until the registry is destroyed.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/object.h"
#include "base/quant_encoding.h"
#include "driver/tensor.h"
#include "weights/weight_entry.h"

namespace maxc {

class WeightsRegistry : public Object {
 public:
  static Ref<WeightsRegistry> create();

  // Adds every tensor of a weights file, or none of them when anything fails. The format
  // comes from the name (".safetensors", ".gguf", ".safetensors.index.json", any case), else
  // from the content (the GGUF magic, a plausible safetensors header). Errors: those of the
  // readers (safetensors.h, gguf.h) and of MappedFile::open; INVALID_ARGUMENT when the format
  // cannot be told; ALREADY_EXISTS naming a weight the registry already has.
  void add_file(const std::string& path);
  // Adds parsed entries, all or none; `source` names them in messages. ALREADY_EXISTS for a
  // name the registry (or the batch itself) already has.
  void add_entries(std::vector<WeightEntry> entries, std::string_view source);
  // Adds a tensor of any device by reference. With an encoding it must be uint8
  // [rows..., row_bytes], row_bytes a multiple of the encoding's block size. Errors:
  // INVALID_ARGUMENT (null tensor, empty name, a tensor that does not fit the encoding),
  // ALREADY_EXISTS (the name is taken).
  void add_tensor(std::string name, Ref<Tensor> tensor, QuantEncoding encoding = QuantEncoding::kNone);

  size_t size() const { return records_.size(); }
  std::vector<std::string> names() const;  // in insertion order
  bool contains(std::string_view name) const;
  // NOT_FOUND naming the weight when absent.
  const WeightInfo& info(std::string_view name) const;
  // The index-th in insertion order; OUT_OF_RANGE past the end.
  const WeightInfo& info_at(size_t index) const;
  // A host tensor over the file's bytes (read-only, zero-copy when the bytes are aligned for
  // the dtype, otherwise a read-only copy), or the tensor that was added. A new view per call;
  // NOT_FOUND naming the weight when absent.
  Ref<Tensor> tensor(std::string_view name) const;

 private:
  struct Record {
    WeightInfo info;
    std::shared_ptr<const MappedFile> file;  // null for an added tensor
    uint64_t offset = 0;
    uint64_t bytes = 0;
    Ref<Tensor> tensor;  // an added tensor
  };

  WeightsRegistry() : Object(ObjectKind::kWeights) {}
  ~WeightsRegistry() override = default;

  const Record& find(std::string_view name) const;
  void insert(std::vector<Record> records, std::string_view source);

  std::deque<Record> records_;  // a deque: info() references survive later additions
  std::unordered_map<std::string_view, size_t> index_;  // views of records_' names
};

}  // namespace maxc
