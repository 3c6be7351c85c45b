// `twice stress`: the reference handlers on real threads against a SQLite file
// in WAL mode (see stress/stress_runner.h), as a subcommand of the `twice` CLI.
// main() calls add_stress_command() once before parsing; when the command line
// names `stress`, parsing sets `action` to the run, which main() then calls.
// Called from main's thread only.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace twice::cli {

// Adds the `stress` subcommand to `app`. After app.parse() has seen it,
// `action` runs it and returns the exit status: 0 no violation, 1 violations
// found, 2 a usage error (the message, one line, is on stderr). `action` must
// outlive the parse.
CLI::App* add_stress_command(CLI::App& app, std::function<int()>& action);

}  // namespace twice::cli
