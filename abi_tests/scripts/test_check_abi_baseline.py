#!/usr/bin/env python3
"""The baseline checker's classification of abidiff reports, on canned reports: an options
struct may grow at its end, nothing else about a struct may change."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_abi_baseline as checker  # noqa: E402

HEADER = """
typedef struct max_compile_options_t {
  size_t struct_size;
  int32_t enable_fusion;
} max_compile_options_t;
typedef struct max_shape_t {
  int64_t rank;
} max_shape_t;
"""


def report(struct, old_bits, new_bits, member_lines):
    members = "\n".join(f"            {m}" for m in member_lines)
    return f"""Functions changes summary: 0 Removed, 1 Changed, 0 Added function
Variables changes summary: 0 Removed, 0 Changed, 0 Added variable

1 function with some indirect sub-type change:

  [C] 'function max_status_t* f({struct}*)' has some indirect sub-type changes:
    parameter 1 of type '{struct}*' has sub-type changes:
      in pointed to type 'typedef {struct}':
        underlying type 'struct {struct}' changed:
          type size changed from {old_bits} to {new_bits} (in bits)
{members}
"""


class Classify(unittest.TestCase):
    growable = checker.options_structs(HEADER)

    def classify(self, text):
        return checker.classify(text, 4, self.growable)

    def test_only_structs_that_lead_with_struct_size_are_options(self):
        self.assertEqual(self.growable, {"max_compile_options_t"})

    def test_a_field_appended_to_an_options_struct_is_an_addition(self):
        breaks, additions, _ = self.classify(report("max_compile_options_t", 256, 320, [
            "1 data member insertion:", "'int32_t copy_inputs_to_device', at offset 256 (in bits)"]))
        self.assertEqual(breaks, [])
        self.assertIn("1 function(s) whose options struct grew at its end", additions)

    def test_a_field_inserted_before_the_end_is_a_break(self):
        breaks, _, _ = self.classify(report("max_compile_options_t", 256, 320, [
            "1 data member insertion:", "'int32_t early', at offset 64 (in bits)"]))
        self.assertEqual(breaks, ["1 functions changed"])

    def test_a_changed_member_type_is_a_break_even_when_the_struct_grows(self):
        breaks, _, _ = self.classify(report("max_compile_options_t", 256, 320, [
            "1 data member change:",
            "type of 'int32_t enable_fusion' changed:",
            "type name changed from 'int32_t' to 'int64_t'"]))
        self.assertEqual(breaks, ["1 functions changed"])

    def test_a_struct_without_struct_size_may_not_grow(self):
        breaks, _, _ = self.classify(report("max_shape_t", 64, 128, [
            "1 data member insertion:", "'int64_t extra', at offset 64 (in bits)"]))
        self.assertEqual(breaks, ["1 functions changed"])


if __name__ == "__main__":
    unittest.main()
