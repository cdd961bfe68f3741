// The process grid: the rank formula, its checks, and five splits of the world.
#include "chapters/03_collectives/process_grid.h"

#include <initializer_list>
#include <sstream>
#include <utility>

#include "common/check.h"

namespace book::coll {

namespace {

std::string degrees_text(const GridDegrees& g) {
  std::ostringstream out;
  out << "dp=" << g.dp << " tp=" << g.tp << " pp=" << g.pp << " ep=" << g.ep;
  return out.str();
}

// One split of `world` into the group whose members share `color`, ordered by `key`, named after
// what its members share, e.g. "world/tp(dp 0, pp 1)", so that an error inside it says which
// group it was.
std::unique_ptr<Communicator> make_group(Communicator& world, const std::string& name, int color,
                                         int key) {
  std::unique_ptr<Communicator> group = world.split(color, key);
  group->set_group_name(world.group() + "/" + name);
  return group;
}

// "tp(dp 0, pp 1)": the kind of group and the coordinates its members share.
std::string shared(const char* kind, std::initializer_list<std::pair<const char*, int>> fixed) {
  std::string name = std::string(kind) + "(";
  for (const auto& [axis, value] : fixed)
    name += (name.back() == '(' ? "" : ", ") + std::string(axis) + " " + std::to_string(value);
  return name + ")";
}

// The number of ranks the degrees make, after checking each is at least 1 and the product fits.
int grid_size(const GridDegrees& g) {
  BOOK_CHECK(g.dp >= 1 && g.tp >= 1 && g.pp >= 1 && g.ep >= 1,
             "process grid: every degree must be at least 1, got " << degrees_text(g));
  const long long product = 1LL * g.dp * g.tp * g.pp;
  BOOK_CHECK(product <= (1 << 24), "process grid: dp x tp x pp = " << product
                                                                   << " ranks is more than this "
                                                                      "book's grids hold (2^24)");
  return static_cast<int>(product);
}

}  // namespace

void ProcessGrid::check(const GridDegrees& g, int world_size) {
  const int product = grid_size(g);
  BOOK_CHECK(product == world_size, "process grid: dp x tp x pp = "
                                        << g.dp << " x " << g.tp << " x " << g.pp << " = "
                                        << product << " ranks, but the world has " << world_size
                                        << "; choose degrees whose product is the world size");
  BOOK_CHECK(g.dp % g.ep == 0, "process grid: ep=" << g.ep << " must divide dp=" << g.dp
                                                   << " (expert-parallel groups are cut out of "
                                                      "the data-parallel group)");
}

GridCoordinates ProcessGrid::coordinates_of(const GridDegrees& g, int rank) {
  const int size = grid_size(g);
  check(g, size);
  BOOK_CHECK(rank >= 0 && rank < size, "process grid: world rank "
                                           << rank << " is not in a grid of " << size << " ranks ("
                                           << degrees_text(g) << ")");
  GridCoordinates c;
  c.tp = rank % g.tp;  // tensor-parallel ranks are neighbours
  c.dp = rank / g.tp % g.dp;
  c.pp = rank / (g.tp * g.dp);  // stages vary slowest
  c.ep = c.dp % g.ep;
  c.expert_dp = c.dp / g.ep;
  return c;
}

int ProcessGrid::world_rank_of(const GridDegrees& g, int dp, int tp, int pp) {
  check(g, grid_size(g));
  BOOK_CHECK(dp >= 0 && dp < g.dp && tp >= 0 && tp < g.tp && pp >= 0 && pp < g.pp,
             "process grid: (dp " << dp << ", tp " << tp << ", pp " << pp
                                  << ") is outside the grid " << degrees_text(g));
  return tp + g.tp * (dp + g.dp * pp);
}

//! [process_grid]
ProcessGrid::ProcessGrid(Communicator& world, const GridDegrees& degrees)
    : world_(world), degrees_(degrees) {
  check(degrees, world.size());  // same verdict on every rank, before any message
  coordinates_ = coordinates_of(degrees, world.rank());
  const GridDegrees& g = degrees_;
  const GridCoordinates& c = coordinates_;
  // Each group is the ranks that agree on every other coordinate (the color), ordered by their
  // own coordinate (the key), so a rank's rank in a group is its coordinate on that axis.
  tp_ = make_group(world, shared("tp", {{"dp", c.dp}, {"pp", c.pp}}), c.dp + g.dp * c.pp, c.tp);
  dp_ = make_group(world, shared("dp", {{"tp", c.tp}, {"pp", c.pp}}), c.tp + g.tp * c.pp, c.dp);
  pp_ = make_group(world, shared("pp", {{"tp", c.tp}, {"dp", c.dp}}), c.tp + g.tp * c.dp, c.pp);
  const int blocks = g.dp / g.ep;  // expert-parallel blocks per data-parallel group
  ep_ = make_group(world, shared("ep", {{"tp", c.tp}, {"pp", c.pp}, {"block", c.expert_dp}}),
                   c.tp + g.tp * (c.expert_dp + blocks * c.pp), c.ep);
  expert_dp_ = make_group(world, shared("expert_dp", {{"tp", c.tp}, {"pp", c.pp}, {"ep", c.ep}}),
                          c.tp + g.tp * (c.ep + g.ep * c.pp), c.expert_dp);
}
//! [process_grid]

int ProcessGrid::previous_stage() const {
  BOOK_CHECK(!is_first_stage(), "process grid: stage 0 is the first stage and has no previous one ("
                                    << describe() << ")");
  return coordinates_.pp - 1;
}

int ProcessGrid::next_stage() const {
  BOOK_CHECK(!is_last_stage(), "process grid: stage " << coordinates_.pp
                                                      << " is the last stage and has no next one ("
                                                      << describe() << ")");
  return coordinates_.pp + 1;
}

std::string ProcessGrid::describe() const {
  std::ostringstream out;
  out << degrees_text(degrees_) << "; world rank " << world_.rank() << " = (dp " << coordinates_.dp
      << ", tp " << coordinates_.tp << ", pp " << coordinates_.pp << ", ep " << coordinates_.ep
      << ")";
  return out.str();
}

}  // namespace book::coll
