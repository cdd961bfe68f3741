// The stage's pictures: block tables and copy-on-write drawn from real BlockManagers (SVG), and
// the replay's memory over time (CSV, and a PNG if gnuplot is installed), all under results/.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chapters/10_paged_attention/pictures.h"
#include "chapters/10_paged_attention/stage.h"
#include "common/table.h"

namespace book::kv::stage {
namespace {

std::vector<std::string> write_pictures(const std::string& dir) {
  // Three sequences growing at once in a pool of 12 blocks of 4: their tables interleave.
  BlockManager tables(12, 4, false);
  tables.add_sequence(0, std::vector<int>(6, 1));
  tables.add_sequence(1, std::vector<int>(3, 2));
  for (int i = 0; i < 4; ++i) tables.append_token(0, 1);
  tables.add_sequence(2, std::vector<int>(7, 3));
  for (int i = 0; i < 2; ++i) tables.append_token(1, 2);
  const PicturePanel layout{"Block tables: logical blocks (top) → physical blocks (pool)",
                            &tables,
                            {0, 1, 2},
                            {"A (10 tokens)", "B (5 tokens)", "C (7 tokens)"}};
  // Copy-on-write: a 6-token prompt forked into two samples, before and after both append.
  BlockManager forked(8, 4, false);
  forked.add_sequence(0, std::vector<int>(6, 1));
  forked.fork(0, 1);
  BlockManager written(8, 4, false);
  written.add_sequence(0, std::vector<int>(6, 1));
  written.fork(0, 1);
  written.append_token(1, 5);  // B's write finds the half block shared: B copies it
  written.append_token(0, 6);  // A is then its only owner: in place
  const PicturePanel before{
      "After fork: both samples share both blocks", &forked, {0, 1}, {"sample A", "sample B"}};
  const PicturePanel after{"After each appends one token: B copied the shared half block",
                           &written,
                           {0, 1},
                           {"sample A", "sample B"}};
  const std::vector<std::pair<std::string, std::vector<PicturePanel>>> files = {
      {dir + "/ch10_block_table.svg", {layout}},
      {dir + "/ch10_copy_on_write.svg", {before, after}}};
  std::vector<std::string> written_paths;
  for (const auto& [path, panels] : files) {
    std::ofstream(path) << block_tables_svg(panels);
    written_paths.push_back(path);
  }
  return written_paths;
}

std::string plot_memory(const ReplayRuns& runs, const std::string& dir) {
  const ReplayResult& contiguous = runs.max_length();
  const ReplayResult& exact = runs.systems[2];
  const ReplayResult& paged = runs.paged();
  const std::size_t steps =
      std::max({contiguous.timeline.size(), exact.timeline.size(), paged.timeline.size()});
  Table csv({"step", "contiguous_stored", "contiguous_reserved", "exact_stored", "exact_reserved",
             "paged_stored", "paged_allocated"});
  auto cell = [](const ReplayResult& r, std::size_t i, bool stored) -> std::string {
    if (i >= r.timeline.size()) return "NaN";
    const auto& s = r.timeline[i];
    return fixed(100.0 * static_cast<double>(stored ? s.stored : s.allocated) /
                     static_cast<double>(r.budget_tokens),
                 2);
  };
  for (std::size_t i = 0; i < steps; ++i)
    csv.add_row({std::to_string(i + 1), cell(contiguous, i, true), cell(contiguous, i, false),
                 cell(exact, i, true), cell(exact, i, false), cell(paged, i, true),
                 cell(paged, i, false)});
  const std::string data = dir + "/ch10_memory_timeline.csv", png = dir + "/ch10_memory.png";
  csv.write_csv(data);
  const std::string script =
      "set terminal pngcairo size 900,500; set output '" + png +
      "'; set datafile separator ','; set datafile missing 'NaN'; set key below maxrows 2;"
      " set yrange [0:105]; set xlabel 'model step (one token per running request)';"
      " set ylabel '% of the KV budget'; set title '" +
      std::to_string(runs.requests.size()) + " requests into " +
      std::to_string(paged.budget_tokens) +
      " KV slots: tokens stored (solid) vs memory taken (dashed)';"
      " plot '" +
      data +
      "' u 1:6 skip 1 w l lw 2 lc rgb '#1f77b4' t 'paged (blocks of 16): stored',"
      " '' u 1:7 skip 1 w l dt 2 lc rgb '#1f77b4' t 'paged: allocated',"
      " '' u 1:2 skip 1 w l lw 2 lc rgb '#d62728' t 'contiguous, max length: stored',"
      " '' u 1:3 skip 1 w l dt 2 lc rgb '#d62728' t 'contiguous, max length: reserved',"
      " '' u 1:4 skip 1 w l lw 2 lc rgb '#2ca02c' t 'contiguous, exact (oracle): stored'";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) != 0)
    return data + " (plot skipped: gnuplot not found; apt-get install gnuplot-nox)";
  return data + ", " + png;
}

}  // namespace

void pictures_section(const ReplayRuns& runs) {
  const std::string dir = results_dir();
  for (const auto& path : write_pictures(dir)) std::cout << "picture: " << path << "\n";
  std::cout << "plot:    " << plot_memory(runs, dir) << "\n\n";
}

}  // namespace book::kv::stage
