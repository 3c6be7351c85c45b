// JSON report, schema version 1, every field described in docs/report-schema.md.
// Reads only the result model. Strings are escaped by nlohmann::json, so untrusted payloads
// that reach a transcript stay data.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/model.h"
#include "twice/status.h"

namespace twice::reports {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::json to_json(const results::MatrixResult& m);
// One server as `servers[]` holds it (engine, version, url or null, settings);
// `twice stress --json` names its server the same way (docs/cli-json.md).
nlohmann::json server_json(const results::EngineServer& server);
// Writes `m` to `path` atomically (a temporary file renamed over it). An
// error names the file and the reason.
Status write_json(const results::MatrixResult& m, const std::string& path);

}  // namespace twice::reports
