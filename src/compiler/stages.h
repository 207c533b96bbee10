// Dims that data decides. A plan is made for concrete shapes, but how many indices a nonzero
// gives, or how long a repeat_interleave by a tensor of repeats makes its axis, is known only
// once its inputs are: its out_dim is a symbol no input binds. So is a shape computed from
// data, whose entries a bind_dims names. Such a program runs in stages. A count node
// (count_nonzero, count_repeats) computes the symbol's value, or a bind_dims' input holds it
// (one entry per symbol); the stage that computes it ends there; the engine reads the value
// and plans the next stage, whose types may use the symbol, with it bound. Values later
// stages read cross over as stage outputs and inputs.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/program.h"

namespace maxc {

// Whether n's out_dim is a count its data decides: nonzero, repeat_interleave with its
// repeats a tensor, and bind_dims.
bool counts_data(const Node& n);

// The symbols n's types and dims attributes name. A node's attributes count: a
// shape_to_tensor of a count names it there only, its output being [rank].
std::set<std::string> symbols_of(const Program& p, const Node& n);

// Adds a count node and a SymbolSource for each symbol an out_dim names that the program's
// inputs do not bind (the first op to name it; later ones check their own count against it
// when they run). A bind_dims becomes a SymbolSource per entry of its input, and goes. UNIMPLEMENTED for an out_dim that is an expression of
// unbound symbols, and for one inside a cond or while_loop region (regions are planned
// whole, with the node).
void add_symbol_sources(Program& p);

// Stage k of p: p's types, weights and constants unchanged (so the program's bound weights
// and placed constants serve every stage), inputs p's inputs followed by the values earlier
// stages computed that it reads (named "%<id>"), its own nodes in order, and as outputs the
// values it computes that later stages, symbol sources or p's outputs read (named "%<id>";
// p's outputs that are leaves come out of stage 0). One stage, p itself, when p has no
// symbol sources.
std::vector<Program> split_stages(const Program& p);

}  // namespace maxc
