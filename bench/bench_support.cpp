#include "bench/bench_support.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace twice::bench {

const gateway::Scenario& bundled_scenario(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, gateway::Scenario> loaded;
  std::lock_guard lock(mutex);
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
  StatusOr<gateway::Scenario> s = gateway::load_scenario(std::string(TWICE_SOURCE_DIR) + "/scenarios/" + name + ".toml");
  if (!s.ok()) {
    std::fprintf(stderr, "twice_bench: %s\n", s.status().message().c_str());
    std::exit(2);
  }
  return loaded.emplace(name, std::move(s).value()).first->second;
}

const HandlerInfo* find_handler(const std::string& name) { return HandlerRegistry::instance().find(name); }

}  // namespace twice::bench
