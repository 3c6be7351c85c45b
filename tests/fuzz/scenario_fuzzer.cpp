// libFuzzer target for the scenario loader (gateway/scenario.h): any bytes as
// a scenario file must give a Scenario or a one-line error, never a crash, a
// hang or a sanitizer report. Built with clang by tests/fuzz/CMakeLists.txt
// (-fsanitize=fuzzer,address,undefined); scripts/test.sh runs it for a minute
// on a corpus of the bundled scenarios, and every file in tests/fuzz/regressions
// once (the inputs that once broke it).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gateway/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The loader reads a path: one in-memory file, rewritten for each input.
  static const int fd = ::memfd_create("twice-scenario.toml", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
  if (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();

  const twice::StatusOr<twice::gateway::Scenario> loaded = twice::gateway::load_scenario(path);
  if (loaded.ok()) {
    const twice::gateway::Scenario& scenario = *loaded;
    if (scenario.orders.empty() || scenario.orders.size() > twice::gateway::kMaxOrders) std::abort();
    if (scenario.latency_min > scenario.latency_max || scenario.close_after > twice::gateway::kMaxDuration) std::abort();
  } else {
    // A message is one line, whatever the file held.
    const std::string& message = loaded.status().message();
    if (message.empty() || message.find('\n') != std::string::npos) std::abort();
    for (unsigned char c : message)
      if (c < 0x20 || c == 0x7f) std::abort();
  }
  return 0;
}
