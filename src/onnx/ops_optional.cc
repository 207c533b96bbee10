// Optional, OptionalHasElement and OptionalGetElement over tensors. An optional tensor is
// imported as its tensor (model_proto.cc reads optional(tensor) types as the tensor type):
// a call gives every input, and every value the importer makes is present, so an optional
// that reaches one of these ops always holds its element. Only the absent forms that are
// known at import (an omitted input) are told apart; an empty Optional() is refused.
#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

// The element itself, still known where it was.
void forward_element(NodeContext& c) {
  if (const KnownValue* k = c.known(0)) return c.set_known_output(0, *k);
  c.set_output(0, c.input(0));
}

void import_optional(NodeContext& c) {
  if (!c.has_input(0)) c.unsupported("an empty optional, which max_c does not support");
  forward_element(c);
}

void import_has_element(NodeContext& c) {
  c.set_known_output(0, KnownValue::from_doubles(DType::kBool, {}, {c.has_input(0) ? 1.0 : 0.0}));
}

void import_get_element(NodeContext& c) {
  if (!c.has_input(0)) c.invalid("has no input to get the element of");
  forward_element(c);
}

}  // namespace

void register_optional_importers(ImportTable& t) {
  t["Optional"] = import_optional;
  t["OptionalHasElement"] = import_has_element;
  t["OptionalGetElement"] = import_get_element;
}

}  // namespace maxc::onnx
