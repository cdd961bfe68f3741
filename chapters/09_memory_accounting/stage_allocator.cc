// The stage's section "Fragmentation: the caching allocator": chapter 4's Trainer stepped with the
// tracker's event log on, the log replayed through the caching-allocator simulator with and
// without expandable segments.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/trainer.h"
#include "chapters/09_memory_accounting/caching_allocator.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/memory.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

// The caching allocator replaying a real trainer's allocations: chapter 4's Trainer built and
// stepped twice with the tracker's event log on, then the log replayed through the simulator with
// and without expandable segments.
struct AllocatorRun {
  std::string model;
  std::size_t events = 0;
  ReplayReport standard, expandable;
};

//! [allocator_replay]
AllocatorRun replay_trainer(const std::string& name, const train::TrainOptions& options) {
  MemoryTracker tracker;
  tracker.record_events(true);
  {
    train::Trainer trainer(options, &tracker);
    trainer.step();
    trainer.step();
  }
  const std::vector<MemoryEvent> events = tracker.events();
  return {name, events.size(), replay(events), replay(events, {.expandable_segments = true})};
}
//! [allocator_replay]

std::vector<AllocatorRun> allocator_runs() {
  train::TrainOptions book_model;
  book_model.precision = DType::kBF16;
  book_model.micro_batch = 32;
  train::TrainOptions wider = book_model;  // a model whose buffers reach the large pool
  wider.model.d_model = 256;
  wider.model.n_layer = 4;
  wider.model.n_head = 8;
  return {replay_trainer("book model (d 64, 2 layers)", book_model),
          replay_trainer("wider (d 256, 4 layers)", wider)};
}

Table allocator_table(const std::vector<AllocatorRun>& runs) {
  Table t({"model (bf16, mb 32, 2 steps)", "allocator", "events", "peak requested B",
           "peak allocated B", "peak reserved B", "reserved / requested", "unused at peak",
           "segments at end", "device calls"});
  for (const AllocatorRun& run : runs)
    for (const auto& [variant, r] :
         {std::pair{"default", &run.standard}, std::pair{"expandable", &run.expandable}})
      t.add_row({run.model, variant, std::to_string(run.events), std::to_string(r->peak_requested),
                 std::to_string(r->peak_allocated), std::to_string(r->at_peak_reserved.reserved),
                 fixed(static_cast<double>(r->at_peak_reserved.reserved) /
                           static_cast<double>(r->peak_requested),
                       3),
                 fixed(100 * r->fragmentation_at_peak(), 1) + "%", std::to_string(r->segments),
                 std::to_string(r->device_calls)});
  return t;
}

// The timeline the picture draws: bytes after every event, both variants.
Table allocator_timeline(const AllocatorRun& run) {
  Table t({"event", "requested", "allocated", "reserved", "reserved_expandable"});
  for (std::size_t i = 0; i < run.standard.timeline.size(); ++i) {
    const AllocatorSample& a = run.standard.timeline[i];
    t.add_row({std::to_string(i), std::to_string(a.bytes.requested),
               std::to_string(a.bytes.allocated), std::to_string(a.bytes.reserved),
               std::to_string(run.expandable.timeline[i].bytes.reserved)});
  }
  return t;
}

}  // namespace

TourLines allocator_section(const StageOptions&) {
  std::cerr << "memory: the caching allocator replaying two trainers' allocations ...\n";
  const std::vector<AllocatorRun> runs = allocator_runs();
  const Table alloc_t = allocator_table(runs);
  std::cout << "## Caching allocator (PyTorch's rules, simulated) replaying a real trainer's "
               "allocations\n\n"
            << alloc_t.markdown() << "\n";
  const std::string dir = results_dir();
  alloc_t.write_csv(dir + "/ch09_allocator.csv");
  allocator_timeline(runs.back()).write_csv(dir + "/ch09_allocator_timeline.csv");

  const AllocatorRun& wide = runs.back();
  std::ostringstream tour;
  tour << "tour: 09 | caching allocator replaying the wider trainer's 2 steps: peak "
          "allocated vs reserved, default -> expandable segments | "
       << wide.standard.peak_allocated << " vs " << wide.standard.at_peak_reserved.reserved
       << " -> " << wide.expandable.at_peak_reserved.reserved
       << " B | cached blocks and 20 MiB segments hold memory no tensor uses\n";
  return tour.str();
}

}  // namespace book::mem::stage
