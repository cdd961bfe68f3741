#include "common/main.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include <unistd.h>

#include "common/check.h"
#include "common/flags.h"

namespace book {

namespace {

std::string program_name(int argc, char** argv) {
  if (argc < 1 || argv == nullptr || argv[0] == nullptr || argv[0][0] == '\0') return "program";
  const std::string path = argv[0];
  return path.substr(path.find_last_of('/') + 1);  // npos + 1 == 0: no slash, the whole path
}

// Where the check that threw sits in the source, for the person debugging it: only on request,
// because a reader of a stage's output needs the message, not a file name.
std::string debug_location(const Error& error) {
  const char* debug = std::getenv("BOOK_DEBUG");
  if (debug == nullptr || *debug == '\0' || error.location().empty()) return "";
  return " (at " + error.location() + ")";
}

// Stdout first, so that what the stage printed before failing comes before the error line.
void report(const std::string& line) {
  std::cout.flush();
  std::fflush(stdout);
  std::cerr << line << std::endl;
}

// The machine's physical memory, as "23.4 GiB" (or "unknown").
std::string physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return "unknown";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB",
                static_cast<double>(pages) * static_cast<double>(page) / (1024.0 * 1024 * 1024));
  return text;
}

}  // namespace

int run_main(int argc, char** argv, const std::function<int(int, char**)>& body) {
  // Must come before anything is written to stdout; std::cout writes through stdio (it is
  // synchronised with it by default), so this covers both.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  const std::string program = program_name(argc, argv);
  try {
    return body(argc, argv);
  } catch (const HelpRequested& help) {
    std::cout << help.text() << std::flush;
    return 0;
  } catch (const NotImplemented& not_started) {
    report(program + ": " + not_started.what() + debug_location(not_started));
    return kExitNotStarted;
  } catch (const Error& error) {  // book::UsageError included
    report(program + ": error: " + error.what() + debug_location(error));
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    // Settings inside every flag's range can still ask for more memory than the machine has.
    report(program + ": error: out of memory: the sizes given need more memory than this " +
           "machine could allocate (" + physical_memory() + " physical); run again with " +
           "smaller sizes (layers, width, ranks, batch, KV budget)");
    return kExitBadInput;
  } catch (const std::exception& other) {
    report(program + ": internal error: " + other.what());
    return kExitInternalError;
  } catch (...) {
    report(program + ": internal error: an exception that is not a std::exception");
    return kExitInternalError;
  }
}

}  // namespace book
