// A schedule: the contest output format, plus a reader/writer.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cost/model/problem.h"

namespace mlsys {

struct Granularity {
  i64 w = 0, h = 0, k = 0;
  bool operator==(const Granularity&) const = default;
};

// Tile traversal order. Raster is written as `null`; the snakes and Custom as explicit lists.
enum class TraversalKind : uint8_t { Raster, RowSnake, ColSnake, Custom };
struct Traversal {
  TraversalKind kind = TraversalKind::Raster;
  std::vector<int32_t> order;  // only for Custom: tile indices r*ntw + c
  bool operator==(const Traversal&) const = default;
};
const char* traversalName(TraversalKind k);

struct SubgraphSched {
  std::vector<OpId> ops;  // in execution order (must be topological)
  Granularity gran;
  Traversal trav;
  std::vector<TensorId> retain;  // tensors_to_retain[s]: kept in fast memory into s+1
  bool operator==(const SubgraphSched&) const = default;
};

struct Schedule {
  std::vector<SubgraphSched> subgraphs;
  std::vector<double> reported;  // subgraph_latencies as read (empty when built in code)
};

// Grid (ntw, nth) of a scheduled subgraph (its non-ephemeral outputs' shape, E1); (1,1) if it has
// no output.
std::pair<i64, i64> subgraphGrid(const Problem& p, const SubgraphSched& sg);

// Explicit tile order of a traversal for an ntw x nth grid (row-major tile ids).
std::vector<int32_t> traversalOrder(const Traversal& t, i64 ntw, i64 nth);

// The same walk from another corner (columns and/or rows mirrored: the clipped edge tiles first)
// and/or backwards.
std::vector<int32_t> mirroredOrder(std::vector<int32_t> order, i64 ntw, i64 nth, bool mirror_cols, bool mirror_rows,
                                   bool reverse);

// Reads a schedule. Format problems (rule V1) throw InputError naming the field and index.
// Op and tensor indices are range-checked against `p`.
Schedule parseScheduleFile(const std::string& path, const Problem& p, const ReadLimits& lim = {});
// `stop` (when set) is polled while parsing and reading out the subgraphs: true ends it with
// ReadInterrupted (no verdict).
Schedule parseScheduleText(const std::string& json, const Problem& p, const std::string& ctx = "schedule",
                           const std::function<bool()>& stop = {});

// Serialises with `latencies` as subgraph_latencies (shortest round-trip decimals).
// Snake traversals are written as explicit permutations (the contest format has no names).
std::string scheduleToJson(const Schedule& s, const Problem& p, const std::vector<double>& latencies);

}  // namespace mlsys
