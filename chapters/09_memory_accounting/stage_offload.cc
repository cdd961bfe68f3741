// The stage's section "Optimizer-state offload": the book model's AdamW state in two budgeted
// arenas, refused by a device of 8 B/param and held once offloaded to the host.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/09_memory_accounting/offload.h"
#include "chapters/09_memory_accounting/stage.h"

namespace book::mem::stage {
namespace {

// Offload measured on the book model's Ψ: a device arena of 8 B/param refuses the full
// mixed-precision state and holds the offloaded one; the bytes moved per step counted.
struct OffloadResult {
  std::size_t psi = 0, device_without = 0, device_with = 0, host_with = 0, moved_per_step = 0;
  std::string refused;
};

OffloadResult measure_offload() {
  train::Config c;
  const train::AdditionTask task(3);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  OffloadResult r;
  r.psi = static_cast<std::size_t>(c.parameter_count());
  const std::vector<float> init(r.psi, 0.01f);
  {
    BudgetedArena device("device", std::size_t{1} << 30), host("host", std::size_t{1} << 30);
    OffloadedAdamW adam(init, device, host, false);
    adam.step(1e-3f);
    r.device_without = device.tracker().peak_total();
  }
  try {
    BudgetedArena device("device", 8 * r.psi), host("host", std::size_t{1} << 30);
    OffloadedAdamW adam(init, device, host, false);
  } catch (const Error& e) {
    r.refused = e.what();
  }
  BudgetedArena device("device", 8 * r.psi), host("host", std::size_t{1} << 30);
  OffloadedAdamW adam(init, device, host, true);
  adam.step(1e-3f);
  r.device_with = device.tracker().peak_total();
  r.host_with = host.tracker().peak_total();
  r.moved_per_step = adam.moved().to_host + adam.moved().to_device;
  return r;
}

}  // namespace

TourLines offload_section(const StageOptions&) {
  const OffloadResult off = measure_offload();
  std::cout << "measured, book model (psi = " << off.psi
            << ") bf16 AdamW, device arena budget 8 B/param: optimizer states on the device "
            << off.device_without << " B (refused: " << off.refused << "); offloaded: device "
            << off.device_with << " B, host " << off.host_with << " B, moved per step "
            << off.moved_per_step << " B\n\n";

  std::ostringstream tour;
  tour << "tour: 09 | book model bf16 AdamW, device budget 8 B/param: state on device -> "
          "optimizer states offloaded to host | "
       << off.device_without << " B (refused) -> " << off.device_with << " B, "
       << off.moved_per_step << " B moved per step"
       << " | offload trades 4 B/param of traffic per step for 12 B/param of memory\n";
  return tour.str();
}

}  // namespace book::mem::stage
