package maxc

/*
#include <max_c.h>
*/
import "C"

// AddSubgraph appends a copy of sub to g as a subgraph and gives its index, which a graph
// attribute (Attrs.Graph) refers to: the then_graph and else_graph of a "cond", the
// predicate and body of a "while_loop" and the graph of a "call" (ABI 1.6). A subgraph is a
// complete graph that sees nothing of g: every value it uses must be one of its inputs, which
// the op passes. Later changes to sub do not reach the copy.
func (g *Graph) AddSubgraph(sub *Graph) (int64, error) {
	if err := g.lock("AddSubgraph"); err != nil {
		return 0, err
	}
	defer g.mu.Unlock()
	// g may be its own subgraph's source; its lock is held already then.
	if sub != g {
		if err := sub.lock("AddSubgraph"); err != nil {
			return 0, err
		}
		defer sub.mu.Unlock()
	}
	var index C.int64_t
	if err := statusError(C.max_graph_add_subgraph(g.p, sub.p, &index)); err != nil {
		return 0, err
	}
	return int64(index), nil
}
