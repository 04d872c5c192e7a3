#include "engine/search.h"

#include "engine/construct.h"

namespace mlsys {

SearchResult runSearch(const Problem& p, const SolveOptions& opt, Deadline& deadline, OutputWriter& out,
                       const Schedule& start) {
  SearchResult r;
  Schedule s = start;
  regranulate(p, opt.model, s, false);
  out.offer(s, deadline.elapsed());
  return r;
}

}  // namespace mlsys
